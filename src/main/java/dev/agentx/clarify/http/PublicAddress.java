package dev.agentx.clarify.http;

import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Optional;

/**
 * Whether an IP address is one of the public internet's, for the server's outgoing requests to
 * URLs that configuration names (notification receivers): an address on the server's own host or
 * network, or a cloud's metadata service, is refused unless the operator allowed it. Refused:
 * unspecified ({@code 0.0.0.0/8}, {@code ::}), loopback ({@code 127.0.0.0/8}, {@code ::1}),
 * private ({@code 10/8}, {@code 172.16/12}, {@code 192.168/16}), shared ({@code 100.64/10}),
 * link-local ({@code 169.254/16}, where the metadata services of the clouds answer, and
 * {@code fe80::/10}), unique-local IPv6 ({@code fc00::/7}, AWS's {@code fd00:ec2::254} among them),
 * site-local IPv6 ({@code fec0::/10}), multicast, broadcast and the reserved and documentation
 * ranges; an IPv6 address that carries an IPv4 one (mapped {@code ::ffff:0:0/96}, compatible
 * {@code ::/96}, NAT64 {@code 64:ff9b::/96}, 6to4 {@code 2002::/16}) is judged by the IPv4 address
 * it carries, and the tunnels whose other end cannot be judged (Teredo {@code 2001::/32}, local
 * NAT64 {@code 64:ff9b:1::/48}) are refused.
 */
public final class PublicAddress {
    private PublicAddress() {
    }

    /** Why {@code address} is not a public address (for example "a loopback address"); empty when it is one. */
    public static Optional<String> refusal(InetAddress address) {
        byte[] b = address.getAddress();
        if (address instanceof Inet4Address) {
            return ipv4(b);
        }
        if (address instanceof Inet6Address) {
            return ipv6(b);
        }
        return Optional.of("an address of an unknown kind");
    }

    /**
     * The IP address a URL's host names literally ({@code 127.0.0.1}, {@code [::1]}), read without
     * asking DNS; empty when the host is a name.
     */
    public static Optional<InetAddress> literal(String host) {
        if (host == null || host.isEmpty()) {
            return Optional.empty();
        }
        String h = host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
        // a name never holds ':', and a name of digits and dots only is read as an address by every resolver
        if (h.indexOf(':') < 0 && !h.matches("[0-9.]+")) {
            return Optional.empty();
        }
        try {
            return Optional.of(InetAddress.getByName(h)); // a literal: no lookup is made
        } catch (UnknownHostException e) {
            return Optional.empty();
        }
    }

    private static Optional<String> ipv4(byte[] b) {
        int a0 = b[0] & 0xff;
        int a1 = b[1] & 0xff;
        int a2 = b[2] & 0xff;
        if (a0 == 0) {
            return Optional.of("an unspecified address (0.0.0.0/8)");
        }
        if (a0 == 127) {
            return Optional.of("a loopback address (127.0.0.0/8)");
        }
        if (a0 == 10 || (a0 == 172 && (a1 & 0xf0) == 16) || (a0 == 192 && a1 == 168)) {
            return Optional.of("a private address (10/8, 172.16/12, 192.168/16)");
        }
        if (a0 == 100 && (a1 & 0xc0) == 64) {
            return Optional.of("a shared address of a carrier's network (100.64.0.0/10)");
        }
        if (a0 == 169 && a1 == 254) {
            return Optional.of("a link-local address (169.254.0.0/16, where cloud metadata services answer)");
        }
        if (a0 == 192 && a1 == 0 && (a2 == 0 || a2 == 2)) {
            return Optional.of("a reserved address (192.0.0.0/24, 192.0.2.0/24)");
        }
        if ((a0 == 198 && (a1 & 0xfe) == 18) || (a0 == 198 && a1 == 51 && a2 == 100) || (a0 == 203 && a1 == 0
                && a2 == 113)) {
            return Optional.of("a reserved address (198.18.0.0/15, 198.51.100.0/24, 203.0.113.0/24)");
        }
        if ((a0 & 0xf0) == 224) {
            return Optional.of("a multicast address (224.0.0.0/4)");
        }
        if ((a0 & 0xf0) == 240) {
            return Optional.of("a reserved or broadcast address (240.0.0.0/4)");
        }
        return Optional.empty();
    }

    private static Optional<String> ipv6(byte[] b) {
        if (zeros(b, 0, 15)) {
            return Optional.of((b[15] & 0xff) == 1 ? "a loopback address (::1)"
                    : (b[15] & 0xff) == 0 ? "an unspecified address (::)" : "an IPv4-compatible address of "
                    + "the unspecified network");
        }
        if (zeros(b, 0, 10) && (b[10] & 0xff) == 0xff && (b[11] & 0xff) == 0xff) {
            return carried(b, 12, "an IPv4-mapped address");
        }
        if (zeros(b, 0, 12)) {
            return carried(b, 12, "an IPv4-compatible address");
        }
        int w0 = ((b[0] & 0xff) << 8) | (b[1] & 0xff);
        int w1 = ((b[2] & 0xff) << 8) | (b[3] & 0xff);
        int w2 = ((b[4] & 0xff) << 8) | (b[5] & 0xff);
        if (w0 == 0x64 && w1 == 0xff9b && zeros(b, 4, 12)) {
            return carried(b, 12, "a NAT64 address");
        }
        if (w0 == 0x64 && w1 == 0xff9b && w2 == 1) {
            return Optional.of("a local-use NAT64 address (64:ff9b:1::/48)");
        }
        if (w0 == 0x2002) {
            return carried(b, 2, "a 6to4 address");
        }
        if (w0 == 0x2001 && w1 == 0) {
            return Optional.of("a Teredo tunnel address (2001::/32)");
        }
        if (w0 == 0x2001 && w1 == 0x0db8) {
            return Optional.of("a documentation address (2001:db8::/32)");
        }
        if (w0 == 0x0100 && w1 == 0 && w2 == 0 && ((b[6] | b[7]) == 0)) {
            return Optional.of("a discard address (100::/64)");
        }
        if ((b[0] & 0xfe) == 0xfc) {
            return Optional.of("a unique-local address (fc00::/7)");
        }
        if ((b[0] & 0xff) == 0xfe && (b[1] & 0xc0) == 0x80) {
            return Optional.of("a link-local address (fe80::/10)");
        }
        if ((b[0] & 0xff) == 0xfe && (b[1] & 0xc0) == 0xc0) {
            return Optional.of("a site-local address (fec0::/10)");
        }
        if ((b[0] & 0xff) == 0xff) {
            return Optional.of("a multicast address (ff00::/8)");
        }
        return Optional.empty();
    }

    /** The IPv4 address carried at {@code from} of an IPv6 one, judged as such. */
    private static Optional<String> carried(byte[] b, int from, String kind) {
        byte[] v4 = {b[from], b[from + 1], b[from + 2], b[from + 3]};
        return ipv4(v4).map(why -> kind + " that carries " + (v4[0] & 0xff) + "." + (v4[1] & 0xff) + "."
                + (v4[2] & 0xff) + "." + (v4[3] & 0xff) + ", " + why);
    }

    private static boolean zeros(byte[] b, int from, int to) {
        for (int i = from; i < to; i++) {
            if (b[i] != 0) {
                return false;
            }
        }
        return true;
    }
}
