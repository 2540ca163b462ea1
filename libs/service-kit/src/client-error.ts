/**
 * Requests Node's HTTP parser refuses before any route sees them (headers too large, a CR or NUL
 * in a header, a malformed request line) are answered in the same error shape as every other
 * error, `{"errors": [...]}`, instead of Fastify's own `{"error", "message", "statusCode"}`.
 */
import type { Socket } from "node:net";

const ANSWERS: Record<string, { status: number; reason: string; message: string }> = {
  ERR_HTTP_REQUEST_TIMEOUT: { status: 408, reason: "Request Timeout", message: "request was not received in time" },
  HPE_HEADER_OVERFLOW: {
    status: 431,
    reason: "Request Header Fields Too Large",
    message: "request headers are too large",
  },
};
const MALFORMED = { status: 400, reason: "Bad Request", message: "request is not valid HTTP" };

export function clientErrorHandler(error: Error & { code?: string }, socket: Socket): void {
  // A reset connection has nobody left to answer.
  if (error.code === "ECONNRESET" || socket.destroyed) return;
  const answer = ANSWERS[error.code ?? ""] ?? MALFORMED;
  const body = JSON.stringify({ errors: [answer.message] });
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${answer.status} ${answer.reason}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nContent-Type: application/json; charset=utf-8\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}
