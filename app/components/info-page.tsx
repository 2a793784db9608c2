import { useRouteLoaderData } from "react-router";
import type { loader as publicLayoutLoader } from "../routes/public-layout.tsx";

/** The legal facts the public layout loads from configuration. */
export interface LegalFacts {
  companyName: string;
  companyNumber: string;
  legalEmail: string;
  supportEmail: string;
}

/** The legal facts of the public layout this page renders in. */
export function useLegalFacts(): LegalFacts {
  const data = useRouteLoaderData<typeof publicLayoutLoader>("routes/public-layout");
  // Informational pages only ever render inside the public layout.
  if (!data) throw new Error("useLegalFacts() outside the public layout");
  return data;
}

/** One informational page: a readable column with one h1. */
export function InfoPage({
  title,
  lead,
  contents,
  children,
}: {
  title: string;
  lead: React.ReactNode;
  /** An "On this page" list of the page's sections: [id, heading]. */
  contents?: readonly (readonly [string, string])[];
  children: React.ReactNode;
}) {
  return (
    <article className="info" aria-labelledby="info-title">
      <h1 id="info-title">{title}</h1>
      <p className="info-lead">{lead}</p>
      {contents ? (
        <nav className="info-contents" aria-labelledby="info-contents-title">
          <h2 id="info-contents-title">On this page</h2>
          <ol>
            {contents.map(([id, heading]) => (
              <li key={id}>
                <a href={`#${id}`}>{heading}</a>
              </li>
            ))}
          </ol>
        </nav>
      ) : null}
      {children}
    </article>
  );
}

/** A section of an informational page, with an anchor for the contents list. */
export function InfoSection({
  id,
  title,
  children,
}: {
  id: string;
  title: string;
  children: React.ReactNode;
}) {
  return (
    <section>
      <h2 id={id}>{title}</h2>
      {children}
    </section>
  );
}

/** The company, its registered number and its mailboxes, as configured. */
export function CompanyFacts() {
  const facts = useLegalFacts();
  return (
    <dl className="company-facts">
      <div>
        <dt>Company</dt>
        <dd>{facts.companyName}</dd>
      </div>
      <div>
        <dt>Registered company number</dt>
        <dd>{facts.companyNumber}</dd>
      </div>
      <div>
        <dt>Legal mailbox</dt>
        <dd>
          <a href={`mailto:${facts.legalEmail}`}>{facts.legalEmail}</a>
        </dd>
      </div>
      <div>
        <dt>Support mailbox</dt>
        <dd>
          <a href={`mailto:${facts.supportEmail}`}>{facts.supportEmail}</a>
        </dd>
      </div>
    </dl>
  );
}
