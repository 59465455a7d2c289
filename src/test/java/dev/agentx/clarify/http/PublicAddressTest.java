package dev.agentx.clarify.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.util.Optional;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Which addresses a notification may be sent to: the public internet's only, in every spelling. */
class PublicAddressTest {
    private static Optional<String> refusal(String literal) throws Exception {
        return PublicAddress.refusal(InetAddress.getByName(literal));
    }

    @ParameterizedTest
    @ValueSource(strings = {"127.0.0.1", "127.255.255.254", "0.0.0.0", "0.1.2.3", "10.0.0.1", "172.16.0.1",
            "172.31.255.255", "192.168.1.1", "100.64.0.1", "169.254.169.254", "169.254.170.2", "192.0.0.192",
            "224.0.0.1", "239.255.255.250", "255.255.255.255", "240.0.0.1", "198.18.0.1", "192.0.2.1",
            "::1", "::", "fe80::1", "fc00::1", "fd00:ec2::254", "fec0::1", "ff02::1", "::ffff:127.0.0.1",
            "::ffff:169.254.169.254", "::ffff:10.1.2.3", "::127.0.0.1", "::169.254.169.254", "64:ff9b::a9fe:a9fe",
            "64:ff9b:1::1", "2002:a9fe:a9fe::1", "2002:7f00:1::", "2001:0:4136:e378::1", "2001:db8::1", "100::1"})
    void addressesOfTheServersOwnHostNetworkOrCloudAreRefused(String literal) throws Exception {
        assertTrue(refusal(literal).isPresent(), literal + " must be refused");
    }

    @ParameterizedTest
    @ValueSource(strings = {"8.8.8.8", "140.82.112.3", "1.1.1.1", "172.32.0.1", "100.128.0.1", "169.253.1.1",
            "2606:4700:4700::1111", "2a00:1450:4001:81c::200e", "::ffff:8.8.8.8", "64:ff9b::808:808",
            "2002:808:808::1"})
    void publicAddressesAreAllowed(String literal) throws Exception {
        assertEquals(Optional.empty(), refusal(literal), literal);
    }

    @ParameterizedTest
    @ValueSource(strings = {"127.0.0.1", "[::1]", "[::ffff:169.254.169.254]", "169.254.169.254", "2130706433"})
    void urlHostsThatAreAddressesAreReadWithoutDns(String host) {
        assertTrue(PublicAddress.literal(host).isPresent(), host);
        assertTrue(PublicAddress.refusal(PublicAddress.literal(host).get()).isPresent(), host);
    }

    @ParameterizedTest
    @ValueSource(strings = {"localhost", "hooks.slack.com", "metadata.google.internal", "example.com"})
    void namesAreNoLiterals(String host) {
        assertEquals(Optional.empty(), PublicAddress.literal(host), host);
    }

    @org.junit.jupiter.api.Test
    void theReasonNamesWhatKindOfAddressItIs() throws Exception {
        assertTrue(refusal("169.254.169.254").orElseThrow().contains("metadata"));
        assertTrue(refusal("::ffff:169.254.169.254").orElseThrow().contains("link-local"), "judged as the IPv4 address");
        assertTrue(refusal("64:ff9b::a9fe:a9fe").orElseThrow().contains("carries 169.254.169.254"));
        assertTrue(refusal("fd00:ec2::254").orElseThrow().contains("unique-local"));
    }
}
