// Spec: 'Are you sure you want to exit?' with Yes (logs out) and No; a click outside closes it.
import { Form, Link } from "react-router";
import { AuthenticityTokenInput } from "remix-utils/csrf/react";
import { Modal, useCloseUrl } from "./modal.tsx";

export function ExitModal() {
  const closeUrl = useCloseUrl();
  return (
    // 'No' first (scripts or not): Enter on a freshly opened Exit must not sign out.
    <Modal labelledBy="exit-title" initialFocus=".exit-no">
      <h2 id="exit-title">Are you sure you want to exit?</h2>
      <div className="actions">
        <Form noValidate method="post" action="/logout">
          <AuthenticityTokenInput />
          <button type="submit" className="button button-primary">
            Yes
          </button>
        </Form>{" "}
        <Link to={closeUrl} replace preventScrollReset className="button button-secondary exit-no" autoFocus>
          No
        </Link>
      </div>
    </Modal>
  );
}
