import { useNavigation } from "react-router";

/** A submit button whose label changes while its form is being submitted. */
export function SubmitButton({
  children,
  pendingLabel,
  name,
  value,
  className = "button button-primary",
}: {
  children: React.ReactNode;
  pendingLabel?: string;
  name?: string;
  value?: string;
  className?: string;
}) {
  const navigation = useNavigation();
  const pending =
    navigation.state === "submitting" && (name === undefined || navigation.formData?.get(name) === value);
  return (
    <button
      type="submit"
      name={name}
      value={value}
      className={className}
      aria-disabled={pending || undefined}
    >
      {pending && pendingLabel ? pendingLabel : children}
    </button>
  );
}
