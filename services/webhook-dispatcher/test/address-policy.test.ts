import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { createAddressPolicy, embeddedIPv4, refusedRangeLabel } from "../src/delivery-http/address-policy.ts";

describe("address policy (SSRF guard)", () => {
  const refused: Array<[string, string]> = [
    ["127.0.0.1", "a loopback address"],
    ["127.255.255.254", "a loopback address"],
    ["10.0.0.1", "a private address"],
    ["10.255.255.255", "a private address"],
    ["172.16.0.1", "a private address"],
    ["172.31.255.255", "a private address"],
    ["192.168.1.10", "a private address"],
    ["169.254.169.254", "the cloud metadata address"],
    ["169.254.10.1", "a link-local address"],
    ["100.64.0.1", "a shared (CGNAT) address"],
    ["0.0.0.0", "an unspecified address"],
    ["224.0.0.1", "a multicast address"],
    ["255.255.255.255", "a reserved address"],
    ["::1", "a loopback address"],
    ["::", "an unspecified address"],
    ["fc00::1", "a unique local (private) address"],
    ["fd12:3456:789a::1", "a unique local (private) address"],
    ["fd00:ec2::254", "a unique local (private) address"],
    ["fe80::1", "a link-local address"],
    ["::ffff:127.0.0.1", "an IPv4-mapped IPv6 address"],
    ["::ffff:7f00:1", "an IPv4-mapped IPv6 address"],
    ["::ffff:10.0.0.1", "an IPv4-mapped IPv6 address"],
    ["::ffff:8.8.8.8", "an IPv4-mapped IPv6 address"],
    ["64:ff9b::a00:1", "a NAT64 address"],
    ["ff02::1", "a multicast address"],
  ];
  for (const [address, label] of refused) {
    test(`${address} is refused as ${label}`, () => {
      assert.equal(refusedRangeLabel(address), label);
      assert.equal(createAddressPolicy([]).refusal("example.com", address), label);
    });
  }

  const allowed = ["8.8.8.8", "1.1.1.1", "172.15.255.255", "172.32.0.1", "192.169.0.1", "11.0.0.1", "2606:4700::1111"];
  for (const address of allowed) {
    test(`${address} is a public address`, () => {
      assert.equal(refusedRangeLabel(address), null);
    });
  }

  test("the IPv4 address inside an IPv4-mapped IPv6 address is found in both notations", () => {
    assert.equal(embeddedIPv4("::ffff:127.0.0.1"), "127.0.0.1");
    assert.equal(embeddedIPv4("::ffff:7f00:1"), "127.0.0.1");
    assert.equal(embeddedIPv4("0:0:0:0:0:ffff:a00:1"), "10.0.0.1");
    assert.equal(embeddedIPv4("2001:db8::1"), null);
  });

  test("the allow-list admits CIDRs, single addresses and host names, and nothing else", () => {
    const policy = createAddressPolicy(["127.0.0.0/8", "::1", "hooks.internal"]);
    assert.equal(policy.refusal("127.0.0.1", "127.0.0.1"), null);
    assert.equal(policy.refusal("localhost", "127.0.0.1"), null);
    assert.equal(policy.refusal("localhost", "::1"), null);
    assert.equal(policy.refusal("x", "::ffff:127.0.0.1"), null, "mapped form of an allowed IPv4 range");
    assert.equal(policy.refusal("hooks.internal", "10.1.2.3"), null);
    assert.equal(policy.refusal("HOOKS.INTERNAL.", "10.1.2.3"), null);
    assert.equal(policy.refusal("other.internal", "10.1.2.3"), "a private address");
    assert.equal(policy.refusal("x", "169.254.169.254"), "the cloud metadata address");
  });

  test("an allow-list entry that is not a valid CIDR stops the boot", () => {
    assert.throws(() => createAddressPolicy(["10.0.0.0/33"]), /WEBHOOKS_ALLOWED_HOSTS entry "10.0.0.0\/33"/);
    assert.throws(() => createAddressPolicy(["nothing/8"]), /is not a valid CIDR/);
  });
});
