package dev.agentx.clarify.support;

import dev.agentx.clarify.store.Replicas;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;

/** Replicas that pass every call to others, for tests that change or count one or two of them. */
public abstract class ForwardingReplicas implements Replicas {
    protected final Replicas real;

    protected ForwardingReplicas(Replicas real) {
        this.real = real;
    }

    @Override
    public String replica() {
        return real.replica();
    }

    @Override
    public EffectClaim claimEffect(String hash, String effect, Instant now, Instant takeOverBefore) {
        return real.claimEffect(hash, effect, now, takeOverBefore);
    }

    @Override
    public Set<String> claimEffects(Map<String, ClaimedEffect> effects, Instant now) {
        return real.claimEffects(effects, now);
    }

    @Override
    public List<ClaimedEffect> adoptEffects(Instant now, int limit) {
        return real.adoptEffects(now, limit);
    }

    @Override
    public List<ClaimedEffect> unsentEffectsClaimedHere() {
        return real.unsentEffectsClaimedHere();
    }

    @Override
    public void effectsDone(Collection<String> hashes) {
        real.effectsDone(hashes);
    }

    @Override
    public Set<String> unfinished(Collection<String> hashes) {
        return real.unfinished(hashes);
    }

    @Override
    public OptionalLong claimTerm() {
        return real.claimTerm();
    }

    @Override
    public boolean othersRunning() {
        return real.othersRunning();
    }

    @Override
    public boolean lease(String name, Instant now, Duration ttl) {
        return real.lease(name, now, ttl);
    }

    @Override
    public void holdInstallation(long installation, Instant until) {
        real.holdInstallation(installation, until);
    }

    @Override
    public Map<Long, Instant> installationHolds(Instant now) {
        return real.installationHolds(now);
    }

    @Override
    public int forgetClaims(Instant before) {
        return real.forgetClaims(before);
    }
}
