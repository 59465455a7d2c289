package dev.agentx.clarify.mcp;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Who is told of which change: one issue's subscribers, every subscriber, or one share of them. */
class IssueChangesTest {
    @Test
    void aShareTellsTheSubscribersOfItsIssuesAndTheSharesTogetherTellEachOnce() {
        IssueChanges changes = new IssueChanges();
        List<Integer> told = new ArrayList<>();
        for (int issue = 1; issue <= 90; issue++) {
            int i = issue;
            changes.subscribe(issue, () -> told.add(i));
        }
        changes.subscribe(31, () -> told.add(-31));

        changes.some(1, 30);
        assertEquals(List.of(-31, 1, 31, 61), told.stream().sorted().toList());

        told.clear();
        for (int part = 0; part < 30; part++) {
            changes.some(part, 30);
        }
        assertEquals(91, told.size());
        assertEquals(91, told.stream().distinct().count());
    }

    @Test
    void aClosedSubscriptionIsToldNothing() {
        IssueChanges changes = new IssueChanges();
        List<Integer> told = new ArrayList<>();
        IssueChanges.Subscription s = changes.subscribe(7, () -> told.add(7));
        changes.subscribe(8, () -> told.add(8));
        s.close();
        changes.changed(7);
        changes.some(7, 30);
        changes.all();
        assertEquals(List.of(8), told);
        assertEquals(1, changes.size());
    }
}
