// Json.java: the stack's one Jackson ObjectMapper, writing doubles in the contract's canonical form.
package bakeoff.http;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializerProvider;
import com.fasterxml.jackson.databind.module.SimpleModule;
import com.fasterxml.jackson.databind.ser.std.StdSerializer;
import java.io.IOException;
import java.math.BigDecimal;

final class Json {
    /** Thread-safe once configured, so every event loop shares it. */
    static final ObjectMapper MAPPER = new ObjectMapper().registerModule(new SimpleModule("plain-doubles")
            .addSerializer(double.class, PlainDouble.INSTANCE)
            .addSerializer(Double.class, PlainDouble.INSTANCE));

    private Json() {}

    /** Jackson prints a double with Double.toString, 1.569882498125E9; BigDecimal.valueOf keeps the
     *  same shortest round-trip digits and toPlainString prints them without an exponent. */
    private static final class PlainDouble extends StdSerializer<Double> {
        static final PlainDouble INSTANCE = new PlainDouble();

        private PlainDouble() {
            super(Double.class);
        }

        @Override
        public void serialize(Double value, JsonGenerator gen, SerializerProvider provider) throws IOException {
            gen.writeNumber(BigDecimal.valueOf(value).toPlainString());
        }
    }
}
