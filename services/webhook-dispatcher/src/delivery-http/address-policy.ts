/**
 * Which addresses a webhook may reach. A client's URL must not make the dispatcher talk to our
 * own network (SSRF): loopback, private, link-local, cloud metadata, shared (CGNAT), multicast,
 * reserved, and the IPv6 forms that embed an IPv4 address are refused, unless the operator
 * allows a host or a range explicitly (the local demo and the tests allow loopback).
 */
import { BlockList, isIP } from "node:net";

type Family = "ipv4" | "ipv6";

const REFUSED_RANGES: Array<[network: string, prefix: number, family: Family, label: string]> = [
  ["0.0.0.0", 8, "ipv4", "an unspecified address"],
  ["10.0.0.0", 8, "ipv4", "a private address"],
  ["100.64.0.0", 10, "ipv4", "a shared (CGNAT) address"],
  ["127.0.0.0", 8, "ipv4", "a loopback address"],
  ["169.254.169.254", 32, "ipv4", "the cloud metadata address"],
  ["169.254.0.0", 16, "ipv4", "a link-local address"],
  ["172.16.0.0", 12, "ipv4", "a private address"],
  ["192.0.0.0", 24, "ipv4", "a reserved address"],
  ["192.0.2.0", 24, "ipv4", "a documentation address"],
  ["192.168.0.0", 16, "ipv4", "a private address"],
  ["198.18.0.0", 15, "ipv4", "a benchmarking address"],
  ["198.51.100.0", 24, "ipv4", "a documentation address"],
  ["203.0.113.0", 24, "ipv4", "a documentation address"],
  ["224.0.0.0", 4, "ipv4", "a multicast address"],
  ["240.0.0.0", 4, "ipv4", "a reserved address"],
  ["::", 128, "ipv6", "an unspecified address"],
  ["::1", 128, "ipv6", "a loopback address"],
  ["::ffff:0:0", 96, "ipv6", "an IPv4-mapped IPv6 address"],
  ["::", 96, "ipv6", "an IPv4-compatible IPv6 address"],
  ["64:ff9b::", 96, "ipv6", "a NAT64 address"],
  ["64:ff9b:1::", 48, "ipv6", "a NAT64 address"],
  ["100::", 64, "ipv6", "a discard address"],
  ["2001:db8::", 32, "ipv6", "a documentation address"],
  ["2002::", 16, "ipv6", "a 6to4 address"],
  ["fc00::", 7, "ipv6", "a unique local (private) address"],
  ["fe80::", 10, "ipv6", "a link-local address"],
  ["fec0::", 10, "ipv6", "a site-local address"],
  ["ff00::", 8, "ipv6", "a multicast address"],
];

const refusedRanges = REFUSED_RANGES.map(([network, prefix, family, label]) => {
  const list = new BlockList();
  list.addSubnet(network, prefix, family);
  return { list, family, label };
});

const familyOf = (address: string): Family | null =>
  isIP(address) === 4 ? "ipv4" : isIP(address) === 6 ? "ipv6" : null;

/** Why an address may not be reached ("a loopback address"), or null for a public address. */
export function refusedRangeLabel(address: string): string | null {
  const family = familyOf(address);
  if (!family) return "not an IP address";
  for (const range of refusedRanges) {
    if (range.family === family && range.list.check(address, family)) return range.label;
  }
  return null;
}

/** The IPv4 address inside an IPv4-mapped IPv6 address (`::ffff:127.0.0.1`, `::ffff:7f00:1`). */
export function embeddedIPv4(address: string): string | null {
  const lower = address.toLowerCase();
  const dotted = /^(?:0{0,4}:){0,4}:?(?:0{0,4}:)?ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (dotted?.[1] && isIP(dotted[1]) === 4) return dotted[1];
  const hex = /^(?:0{0,4}:){0,4}:?(?:0{0,4}:)?ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
  if (!hex?.[1] || !hex[2]) return null;
  const high = Number.parseInt(hex[1], 16);
  const low = Number.parseInt(hex[2], 16);
  return [high >> 8, high & 255, low >> 8, low & 255].join(".");
}

export interface AddressPolicy {
  /** Why the host may not be reached at this address ("a loopback address"), or null when it may. */
  refusal(hostname: string, address: string): string | null;
}

/** "127.0.0.1 is a loopback address", or "localhost resolves to 127.0.0.1, a loopback address". */
export function describeRefusal(host: string, address: string, label: string): string {
  return isIP(host) ? `${host} is ${label}` : `${host} resolves to ${address}, ${label}`;
}

/** Builds the policy from WEBHOOKS_ALLOWED_HOSTS: host names, IP addresses and CIDRs. */
export function createAddressPolicy(allowedEntries: readonly string[]): AddressPolicy {
  const allowedHosts = new Set<string>();
  const allowedRanges = new BlockList();
  for (const raw of allowedEntries) {
    const entry = raw
      .trim()
      .toLowerCase()
      .replace(/^\[|\]$/g, "");
    if (!entry) continue;
    const [network = "", prefix] = entry.split("/");
    const family = familyOf(network);
    if (prefix !== undefined) {
      const bits = Number(prefix);
      const max = family === "ipv4" ? 32 : 128;
      if (!family || !/^\d+$/.test(prefix) || bits > max) {
        throw new Error(`WEBHOOKS_ALLOWED_HOSTS entry "${raw}" is not a valid CIDR`);
      }
      allowedRanges.addSubnet(network, bits, family);
    } else if (family) {
      allowedRanges.addAddress(network, family);
    } else {
      allowedHosts.add(entry.replace(/\.$/, ""));
    }
  }
  const isAllowed = (address: string) => {
    const family = familyOf(address);
    if (family && allowedRanges.check(address, family)) return true;
    const inner = family === "ipv6" ? embeddedIPv4(address) : null;
    return inner !== null && allowedRanges.check(inner, "ipv4");
  };
  return {
    refusal(hostname, address) {
      const host = hostname
        .toLowerCase()
        .replace(/^\[|\]$/g, "")
        .replace(/\.$/, "");
      if (allowedHosts.has(host) || isAllowed(address)) return null;
      return refusedRangeLabel(address);
    },
  };
}
