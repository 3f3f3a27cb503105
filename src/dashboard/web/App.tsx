// The shell: who is signed in, the test/live switch (test mode always marked, live mode noted while it is
// not ready to take money), the navigation and the page the path names.
import { Provider } from "@urql/preact";
import { useEffect, useMemo, useState } from "preact/hooks";
import { createClient } from "./client.js";
import { Home } from "./pages/Home.js";
import { LiveNotReady } from "./pages/LiveChecklist.js";
import { InvitationPage, ResetPasswordPage } from "./pages/PasswordReset.js";
import { SignIn } from "./pages/SignIn.js";
import { Link, usePath } from "./router.js";
import { currentSession, type Session, signOut, switchMode } from "./session.js";
import { ErrorNote } from "./ui.js";
import { lazyPage } from "./lazy.js";

// Every page but the home page loads when first shown.
const Balance = lazyPage(() => import("./pages/Balance.js").then((m) => m.Balance));
const ChargePage = lazyPage(() => import("./pages/ChargePage.js").then((m) => m.ChargePage));
const Charges = lazyPage(() => import("./pages/Charges.js").then((m) => m.Charges));
const NewCharge = lazyPage(() => import("./pages/NewCharge.js").then((m) => m.NewCharge));
const CustomerPage = lazyPage(() => import("./pages/CustomerPage.js").then((m) => m.CustomerPage));
const Customers = lazyPage(() => import("./pages/Customers.js").then((m) => m.Customers));
const Developers = lazyPage(() => import("./pages/Developers.js").then((m) => m.Developers));
const EmailPage = lazyPage(() => import("./pages/Emails.js").then((m) => m.EmailPage));
const Emails = lazyPage(() => import("./pages/Emails.js").then((m) => m.Emails));
const EventPage = lazyPage(() => import("./pages/Events.js").then((m) => m.EventPage));
const Events = lazyPage(() => import("./pages/Events.js").then((m) => m.Events));
const NewInvoice = lazyPage(() => import("./pages/InvoiceForm.js").then((m) => m.NewInvoice));
const InvoicePage = lazyPage(() => import("./pages/InvoicePage.js").then((m) => m.InvoicePage));
const Invoices = lazyPage(() => import("./pages/Invoices.js").then((m) => m.Invoices));
const PaymentLinkPage = lazyPage(() => import("./pages/PaymentLinks.js").then((m) => m.PaymentLinkPage));
const PaymentLinks = lazyPage(() => import("./pages/PaymentLinks.js").then((m) => m.PaymentLinks));
const Plans = lazyPage(() => import("./pages/Plans.js").then((m) => m.Plans));
const SubscriptionPage = lazyPage(() => import("./pages/Subscriptions.js").then((m) => m.SubscriptionPage));
const Subscriptions = lazyPage(() => import("./pages/Subscriptions.js").then((m) => m.Subscriptions));
const Payouts = lazyPage(() => import("./pages/Payouts.js").then((m) => m.Payouts));
const Security = lazyPage(() => import("./pages/Security.js").then((m) => m.Security));
const Settings = lazyPage(() => import("./pages/Settings.js").then((m) => m.Settings));
const X402 = lazyPage(() => import("./pages/X402.js").then((m) => m.X402));

export function App() {
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  const [error, setError] = useState<Error | null>(null);
  const path = usePath();
  useEffect(() => {
    currentSession().then(setSession, setError);
  }, []);
  // The emailed links' pages work with or without a session.
  if (path === "/reset-password") return <ResetPasswordPage />;
  if (path === "/invitation") return <InvitationPage onSignedIn={setSession} />;
  if (error) return <ErrorNote error={error} />;
  if (session === undefined) return <p class="loading">Loading…</p>;
  if (session === null) return <SignIn onSignedIn={setSession} />;
  // A new client per session and mode: nothing cached in one mode shows in the other.
  return <SignedIn key={`${session.id}:${session.mode}`} session={session} onChange={setSession} />;
}

const PAGES = [
  ["/", "Home"],
  ["/charges", "Charges"],
  ["/balance", "Balance"],
  ["/payouts", "Payouts"],
  ["/customers", "Customers"],
  ["/invoices", "Invoices"],
  ["/payment-links", "Payment links"],
  ["/subscriptions", "Subscriptions"],
  ["/plans", "Plans"],
  ["/x402", "x402"],
  ["/events", "Events"],
  ["/developers", "Developers"],
  ["/settings", "Settings"],
] as const;

function SignedIn({ session, onChange }: { session: Session; onChange: (s: Session | null) => void }) {
  // Read the session again when the server says it changed: ended (sign-in) or in the other mode.
  const { client, close } = useMemo(() => createClient(session, () => void currentSession().then(onChange, () => onChange(null))), [session]);
  useEffect(() => close, [close]);
  const path = usePath();
  const [error, setError] = useState<Error | null>(null);
  const live = session.mode === "live";
  const toggle = () => switchMode(session, live ? "test" : "live").then(onChange, setError);
  const leave = () => signOut(session).then(() => onChange(null), setError);
  return (
    <Provider value={client}>
      {!live && (
        <div class="test-banner" role="note">
          Test mode: test data and test chains, no real money
        </div>
      )}
      <header class="top">
        <strong class="brand">Stablegate</strong>
        <nav aria-label="Dashboard">
          {PAGES.map(([href, label]) => (
            <Link key={href} href={href} aria-current={section(path) === href ? "page" : undefined}>
              {label}
            </Link>
          ))}
        </nav>
        <div class="session">
          {/* Both modes named, the current one marked: the switch itself is the "Live mode" toggle. */}
          <div class="mode-switch" data-mode={session.mode}>
            <span class="mode-name mode-test" aria-hidden="true">
              Test mode
            </span>
            <label>
              <input type="checkbox" role="switch" checked={live} onChange={toggle} />
              <span class="mode-name mode-live">Live mode</span>
            </label>
          </div>
          <span class="muted user">{session.user.email}</span>
          <button type="button" class="link" onClick={leave}>
            Sign out
          </button>
        </div>
      </header>
      <main>
        <ErrorNote error={error} />
        {/* Read again on every page (key), so a fix made in Settings or Developers shows at once; Home shows the checklist itself. */}
        {live && path !== "/" && <LiveNotReady key={path} />}
        <Page path={path} session={session} onSignedOut={() => onChange(null)} />
      </main>
    </Provider>
  );
}

function section(path: string): string {
  return `/${path.split("/")[1] ?? ""}`;
}

function Page({ path, session, onSignedOut }: { path: string; session: Session; onSignedOut: () => void }) {
  const [, first, id, sub] = path.split("/");
  if (first === "charges") return id === "new" ? <NewCharge /> : id ? <ChargePage id={id} /> : <Charges />;
  if (first === "balance") return <Balance mode={session.mode} />;
  if (first === "payouts") return <Payouts mode={session.mode} />;
  if (first === "customers") return id ? <CustomerPage id={id} /> : <Customers />;
  if (first === "invoices") return id === "new" ? <NewInvoice /> : id ? <InvoicePage key={id} id={id} /> : <Invoices />;
  if (first === "payment-links") return id ? <PaymentLinkPage id={id} /> : <PaymentLinks />;
  if (first === "subscriptions") return id ? <SubscriptionPage key={id} id={id} /> : <Subscriptions />;
  if (first === "plans") return <Plans />;
  if (first === "x402") return <X402 mode={session.mode} />;
  if (first === "events") return id ? <EventPage key={id} id={id} /> : <Events />;
  if (first === "developers" && id === "emails") return sub ? <EmailPage key={sub} id={sub} /> : <Emails />;
  if (first === "developers") return <Developers />;
  if (first === "settings" && id === "security") return <Security />;
  if (first === "settings") return <Settings session={session} onSignedOut={onSignedOut} />;
  if (!first) return <Home />;
  return (
    <p>
      No such page. <Link href="/">Go home</Link>
    </p>
  );
}
