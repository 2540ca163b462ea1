/**
 * A browser's view of the console, over plain HTTP: its cookie jar (a cookie cleared by the
 * console leaves it) and the CSRF token the last session answer handed out, sent on changes.
 */
import http from "node:http";

export class Browser {
  cookies = new Map<string, string>();
  csrf = "";
  readonly base: string;
  constructor(base: string) {
    this.base = base;
  }
  async call(method: string, path: string, body?: unknown, options: { csrf?: boolean } = {}) {
    const headers: Record<string, string> = {
      cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; "),
    };
    if (body !== undefined) headers["content-type"] = "application/json";
    if (options.csrf !== false && method !== "GET") headers["x-csrf-token"] = this.csrf;
    const response = await fetch(`${this.base}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
    });
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(";");
      const [name, value] = (pair ?? "").split("=");
      if (name) {
        if (value) this.cookies.set(name, value);
        else this.cookies.delete(name);
      }
    }
    const text = await response.text();
    const parsed = text && response.headers.get("content-type")?.includes("json") ? JSON.parse(text) : text;
    if (parsed && typeof parsed === "object" && "csrf_token" in parsed) this.csrf = parsed.csrf_token;
    return { status: response.status, body: parsed, headers: response.headers };
  }
  /** A GET of this path sent as written, with the cookies: fetch would resolve its dots itself first. */
  getAsWritten(path: string): Promise<{ status: number; body: string }> {
    const url = new URL(this.base);
    const cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
    return new Promise((resolve, reject) => {
      http
        .get({ host: url.hostname, port: url.port, path, headers: { cookie } }, (response) => {
          let body = "";
          response.on("data", (chunk) => {
            body += chunk;
          });
          response.on("end", () => resolve({ status: response.statusCode ?? 0, body }));
        })
        .on("error", reject);
    });
  }
  async open() {
    return this.call("GET", "/api/session");
  }
}
