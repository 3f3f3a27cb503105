// The merchant dashboard: sign in, then the pages over /graphql with the session (.docs/dashboard.md "Sign-in
// and sessions"). Bundled by `npm run build` into dist/dashboard and served at /dashboard.
import { render } from "preact";
import { App } from "./App.js";

render(<App />, document.getElementById("app")!);
