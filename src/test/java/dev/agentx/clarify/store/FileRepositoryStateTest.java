package dev.agentx.clarify.store;

import dev.agentx.clarify.lock.LockManager;
import dev.agentx.clarify.store.files.FileRepositoryState;

class FileRepositoryStateTest extends RepositoryStateContract {
    @Override
    protected RepositoryState state(LockManager locks) {
        return new FileRepositoryState(root.resolve(".agentx/state"), locks);
    }
}
