import { Link } from "react-router";

// Holder security settings (issue 27, record 048): each on a page of its own
// under /security, so every form works as a plain HTML form with scripts off.
// The spec's phrase reveal above stays exactly as it is.
export function SecurityLinks({ emailVerified }: { emailVerified: boolean }) {
  return (
    <nav className="card security-links" aria-labelledby="security-settings-title">
      <h2 id="security-settings-title">Security settings</h2>
      <ul>
        <li>
          <Link to="/security/two-factor">Two-factor authentication</Link>
        </li>
        <li>
          <Link to="/security/addresses">Saved addresses</Link>
        </li>
        <li>
          <Link to="/security/sessions">Sessions</Link>
        </li>
        <li>
          <Link to="/security/password">Change password</Link>
        </li>
        <li>
          <Link to="/security/email">{emailVerified ? "E-mail alerts" : "Verify your e-mail"}</Link>
        </li>
      </ul>
    </nav>
  );
}
