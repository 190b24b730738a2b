// The memory backend, counting the find commands it serves and reporting them as MongoDB does, in
// serverStatus.opcounters.query: the lab's proof that a stack reads the store on every request.
package bakeoff.docstore;

import de.bwaldvogel.mongo.backend.memory.MemoryBackend;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.wire.message.MongoMessage;

import java.util.concurrent.atomic.AtomicLong;

final class CountingBackend extends MemoryBackend {
    private final AtomicLong finds = new AtomicLong();

    /** Every command of a current driver arrives as OP_MSG; its first key names the command. */
    @Override
    public Document handleMessage(MongoMessage message) {
        // MongoDB counts a find command under opcounters.query when it arrives, whatever its outcome.
        if ("find".equals(message.getDocument().keySet().stream().findFirst().orElse(""))) {
            finds.incrementAndGet();
        }
        return super.handleMessage(message);
    }

    @Override
    public Document getServerStatus() {
        Document status = super.getServerStatus();
        status.put("opcounters", new Document("query", finds.get()));
        return status;
    }
}
