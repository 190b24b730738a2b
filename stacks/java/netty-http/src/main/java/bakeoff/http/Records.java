// Records.java: the json scenario's 1,000 records, decoded once at start-up from records.json.
package bakeoff.http;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import com.fasterxml.jackson.core.type.TypeReference;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

final class Records {
    /** One record; the property order is the canonical key order, which Jackson would otherwise
     *  leave to its own rules. */
    @JsonPropertyOrder({"id", "name", "description", "type", "count", "created_at"})
    record Record(long id, String name, String description, String type, long count,
                  @JsonProperty("created_at") double createdAt) {}

    private Records() {}

    static List<Record> load(Path file) throws IOException {
        return List.copyOf(Json.MAPPER.readValue(file.toFile(), new TypeReference<List<Record>>() {}));
    }
}
