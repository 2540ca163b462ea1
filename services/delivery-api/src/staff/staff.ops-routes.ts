/**
 * The operator's staff under /ops/v1 (the staff contract with the console): who is calling
 * (`/staff/me`), the people and their roles, their tokens (admins, and the console minting a
 * session's token with its automation token), and a person's own personal tokens for the CLI.
 * Which role may call what is ops-access.ts's table, checked before these handlers run.
 */
import { ErrorBody } from "@dos/contracts";
import { forbidden } from "@dos/service-kit";
import { Type } from "@sinclair/typebox";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { LinkHeader, nextPageLink, PageQuery } from "../http/paging.ts";
import { pathId } from "../http/request-input.ts";
import {
  CreateStaffBody,
  CreateStaffTokenBody,
  ListStaffQuery,
  OpsActor,
  type OpsActorView,
  Staff,
  StaffList,
  StaffTokenCreated,
  StaffTokenList,
  UpdateStaffBody,
} from "./staff.schemas.ts";
import type { StaffService } from "./staff.service.ts";

export interface StaffOpsRoutesOptions {
  staff: StaffService;
  /** After a token is revoked or a person changed: cached staff logins are forgotten. */
  onAccessChange: () => void;
  /** A token was just created (its SHA-256): its holder is trusted at once on this replica. */
  onTokenCreated: (sha256: Buffer) => void;
}

interface IdParams {
  id: string;
}
interface TokenParams {
  id: string;
  tokenId: string;
}

const tags = ["staff"];
const errors = (...statuses: number[]) => Object.fromEntries(statuses.map((status) => [status, ErrorBody]));
const NoContent = Type.Null({ description: "Revoked: the token stops working at once on this replica." });

/** The person calling, for the /staff/me routes (the access table already refused automation). */
function myId(request: FastifyRequest): number {
  const { actor } = request;
  if (actor.kind !== "staff") throw forbidden("automation has no personal tokens");
  return actor.id;
}

export async function staffOpsRoutes(app: FastifyInstance, options: StaffOpsRoutesOptions) {
  const { staff, onAccessChange, onTokenCreated } = options;

  const mint = async (reply: FastifyReply, staffId: number, body: CreateStaffTokenBody) => {
    const { sha256, ...created } = await staff.createToken(staffId, body);
    onTokenCreated(sha256);
    // The token appears in this answer only: no cache may keep a copy (and the audit log redacts it).
    return reply.code(201).header("cache-control", "no-store").send(created);
  };
  const tokenList = async (request: FastifyRequest, reply: FastifyReply, staffId: number, page: PageQuery) => {
    const { tokens, hasMore } = await staff.listTokens(staffId, page);
    nextPageLink(request, reply, page, hasMore);
    return { tokens };
  };
  const revoke = async (reply: FastifyReply, staffId: number, tokenId: number) => {
    await staff.revokeToken(staffId, tokenId);
    onAccessChange();
    return reply.code(204).send();
  };

  app.get(
    "/staff/me",
    {
      schema: {
        tags,
        operationId: "staff.me",
        summary: "Who is calling: the automation token, or the person whose token this is",
        response: { 200: OpsActor },
      },
    },
    async (request): Promise<OpsActorView> => {
      const { kind, id, email, name, role } = request.actor;
      return { kind, id, email, name, role };
    },
  );

  app.get<{ Querystring: PageQuery }>(
    "/staff/me/tokens",
    {
      schema: {
        tags,
        operationId: "staff.my-tokens",
        summary: "List my live personal tokens (never the tokens themselves)",
        querystring: PageQuery,
        response: { 200: { ...StaffTokenList, headers: LinkHeader }, ...errors(403, 422) },
      },
    },
    async (request, reply) => tokenList(request, reply, myId(request), request.query),
  );

  app.post<{ Body: CreateStaffTokenBody }>(
    "/staff/me/tokens",
    {
      schema: {
        tags,
        operationId: "staff.create-my-token",
        summary: "Create a personal token (e.g. for the CLI); it is shown once, in this answer",
        description: "Send it as `Authorization: Bearer <token>`: every request is then made, and audited, as me.",
        body: CreateStaffTokenBody,
        response: { 201: StaffTokenCreated, ...errors(403, 422) },
      },
    },
    async (request, reply) => mint(reply, myId(request), request.body),
  );

  app.delete<{ Params: { tokenId: string } }>(
    "/staff/me/tokens/:tokenId",
    {
      schema: {
        tags,
        operationId: "staff.revoke-my-token",
        summary: "Revoke one of my personal tokens",
        response: { 204: NoContent, ...errors(403, 404) },
      },
    },
    async (request, reply) => revoke(reply, myId(request), pathId(request.params.tokenId, "token")),
  );

  app.post<{ Body: CreateStaffBody }>(
    "/staff",
    {
      schema: {
        tags,
        operationId: "staff.create",
        summary: "Add a person to the staff (e-mails are unique, compared lower-cased)",
        body: CreateStaffBody,
        response: { 201: Staff, ...errors(403, 409, 422) },
      },
    },
    async (request, reply) => reply.code(201).send(await staff.create(request.body)),
  );

  app.get<{ Querystring: ListStaffQuery }>(
    "/staff",
    {
      schema: {
        tags,
        operationId: "staff.list",
        summary: "List the staff by id, or find a person by e-mail",
        querystring: ListStaffQuery,
        response: { 200: { ...StaffList, headers: LinkHeader }, ...errors(403, 422) },
      },
    },
    async (request, reply) => {
      const { staff: people, hasMore } = await staff.list(request.query);
      nextPageLink(request, reply, request.query, hasMore);
      return { staff: people };
    },
  );

  app.get<{ Params: IdParams }>(
    "/staff/:id",
    {
      schema: {
        tags,
        operationId: "staff.get",
        summary: "Show a person of the staff",
        response: { 200: Staff, ...errors(403, 404) },
      },
    },
    async (request) => staff.get(pathId(request.params.id, "staff")),
  );

  app.patch<{ Params: IdParams; Body: UpdateStaffBody }>(
    "/staff/:id",
    {
      schema: {
        tags,
        operationId: "staff.update",
        summary: "Rename a person, change their role, disable them (revoking every token) or enable them again",
        body: UpdateStaffBody,
        response: { 200: Staff, ...errors(403, 404, 422) },
      },
    },
    async (request) => {
      const updated = await staff.update(pathId(request.params.id, "staff"), request.body ?? {});
      // A role or a disabled person must not live on in this replica's cached logins.
      onAccessChange();
      return updated;
    },
  );

  app.post<{ Params: IdParams; Body: CreateStaffTokenBody }>(
    "/staff/:id/tokens",
    {
      schema: {
        tags,
        operationId: "staff.create-token",
        summary: "Create a token for a person; it is shown once, in this answer",
        description:
          "The console mints a staff session's token this way, with its automation token. " +
          "Send it as `Authorization: Bearer <token>`.",
        body: CreateStaffTokenBody,
        response: { 201: StaffTokenCreated, ...errors(403, 404, 422) },
      },
    },
    async (request, reply) => mint(reply, pathId(request.params.id, "staff"), request.body),
  );

  app.get<{ Params: IdParams; Querystring: PageQuery }>(
    "/staff/:id/tokens",
    {
      schema: {
        tags,
        operationId: "staff.list-tokens",
        summary: "List a person's live tokens (never the tokens themselves)",
        querystring: PageQuery,
        response: { 200: { ...StaffTokenList, headers: LinkHeader }, ...errors(403, 404, 422) },
      },
    },
    async (request, reply) => tokenList(request, reply, pathId(request.params.id, "staff"), request.query),
  );

  app.delete<{ Params: TokenParams }>(
    "/staff/:id/tokens/:tokenId",
    {
      schema: {
        tags,
        operationId: "staff.revoke-token",
        summary: "Revoke a person's token",
        response: { 204: NoContent, ...errors(403, 404) },
      },
    },
    async (request, reply) =>
      revoke(reply, pathId(request.params.id, "staff"), pathId(request.params.tokenId, "token")),
  );
}
