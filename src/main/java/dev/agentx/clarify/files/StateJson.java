package dev.agentx.clarify.files;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonStreamContext;
import com.fasterxml.jackson.core.util.JsonParserDelegate;
import com.fasterxml.jackson.databind.BeanDescription;
import com.fasterxml.jackson.databind.BeanProperty;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonSerializer;
import com.fasterxml.jackson.databind.MapperFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectReader;
import com.fasterxml.jackson.databind.SerializationConfig;
import com.fasterxml.jackson.databind.SerializerProvider;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.jsontype.TypeSerializer;
import com.fasterxml.jackson.databind.ser.BeanSerializerModifier;
import com.fasterxml.jackson.databind.ser.ContextualSerializer;
import com.fasterxml.jackson.databind.ser.ResolvableSerializer;
import com.fasterxml.jackson.databind.ser.std.StdSerializer;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.time.Instant;
import java.util.Arrays;
import java.util.Map;
import java.util.Set;

/**
 * The data binding of the state files (ledgers, {@code agent-status.json}, {@code events.jsonl},
 * the changes one process leaves another): one {@link ObjectMapper}, configured once and created
 * on first use, over the records, which declare their schema with Jackson's annotations (order,
 * inclusion, {@code @JsonProperty(required = true)}, {@code @JsonSetter(nulls = Nulls.SKIP)} where
 * null is allowed). Reading is strict, and every refusal says what was expected where the parser
 * stopped, as {@link JsonErrors#describe} shows it:
 * <ul>
 *   <li>a value of another type, or null where the schema allows none: a {@link FieldProblem}
 *       {@code field 'round' must be an integer} (a string, an integer, true or false, an array, an
 *       object; an instant that is no ISO-8601 instant says so);</li>
 *   <li>a field the record does not declare: Jackson's {@code IgnoredPropertyException}, at the
 *       field, unless the reader is {@link #lenient} about them;</li>
 *   <li>a required field that is missing: a {@link FieldProblem#missing()}, at the object's end;</li>
 *   <li>a value the record's constructor refuses: a {@link FieldProblem} with its message;</li>
 *   <li>a number out of range, a duplicate key (for the readers that ask for it) or broken JSON:
 *       jackson-core's own exception.</li>
 * </ul>
 * Instants are written as {@link Instant#toString} writes them and read with {@link IsoInstant}.
 * Integers are read with {@link JsonNumbers}. No module is looked up on the class path.
 */
public final class StateJson {
    private StateJson() {
    }

    /** The mapper. Never reconfigure it; take readers and writers from it. */
    public static ObjectMapper mapper() {
        return Holder.MAPPER;
    }

    /**
     * The same binding for documents whose objects are keyed by ids (an issue's note in the outbox
     * journal counts the entries posted per record id), made on first use: its parsers keep no table
     * of the field names they meet ({@link JsonSupport#idKeyed} says why).
     */
    public static ObjectMapper idKeyed() {
        return IdKeyed.MAPPER;
    }

    /**
     * Reads the annotations of {@code types} (the classes, their members, constructors'
     * parameters and record components) and those of each annotation's type, without the mapper.
     * The JDK makes a class for each annotation type at run time and keeps what it parsed; a
     * thread that does this while another builds the mapper spares the introspection that work.
     */
    public static void readAnnotations(Class<?>... types) {
        for (Class<?> type : types) {
            java.util.List<java.lang.annotation.Annotation> found = new java.util.ArrayList<>();
            found.addAll(Arrays.asList(type.getDeclaredAnnotations()));
            for (java.lang.reflect.Field f : type.getDeclaredFields()) {
                found.addAll(Arrays.asList(f.getDeclaredAnnotations()));
            }
            for (java.lang.reflect.Method m : type.getDeclaredMethods()) {
                found.addAll(Arrays.asList(m.getDeclaredAnnotations()));
            }
            for (java.lang.reflect.Constructor<?> c : type.getDeclaredConstructors()) {
                found.addAll(Arrays.asList(c.getDeclaredAnnotations()));
                for (java.lang.annotation.Annotation[] on : c.getParameterAnnotations()) {
                    found.addAll(Arrays.asList(on));
                }
            }
            if (type.isRecord()) {
                for (java.lang.reflect.RecordComponent r : type.getRecordComponents()) {
                    found.addAll(Arrays.asList(r.getDeclaredAnnotations()));
                }
            }
            for (java.lang.annotation.Annotation a : found) {
                a.annotationType().getDeclaredAnnotations();
            }
        }
    }

    /**
     * {@code reader} skipping the fields its types do not declare instead of refusing them;
     * those skipped are named in {@code unknown} (as {@code field}, {@code array[].field} in an
     * object of an array). Read a parser made by {@link #recording} with it.
     */
    public static ObjectReader lenient(ObjectReader reader) {
        return reader.without(DeserializationFeature.FAIL_ON_IGNORED_PROPERTIES);
    }

    /** {@code p}, naming in {@code unknown} each field a lenient reader skips. */
    public static JsonParser recording(JsonParser p, Set<String> unknown) {
        return new JsonParserDelegate(p) {
            @Override
            public JsonParser skipChildren() throws IOException {
                // only a lenient reader skips, and only the value of a field its type does not declare
                JsonStreamContext c = getParsingContext();
                if (currentToken() != null && currentToken().isStructStart()) {
                    c = c.getParent();
                }
                JsonStreamContext up = c.getParent();
                String name = c.getCurrentName();
                unknown.add(up != null && up.inArray() && up.getParent() != null
                        ? up.getParent().getCurrentName() + "[]." + name : name);
                return super.skipChildren();
            }
        };
    }

    /**
     * A value or a missing field refused while reading, located where the parser stopped. For a
     * missing field {@link #type()} is the record that lacks it and {@link #assigned()} holds the
     * text fields that were read; otherwise {@link #field()} is the field holding the value (an
     * array's field for its elements).
     */
    public static final class FieldProblem extends JsonMappingException {
        private static final long serialVersionUID = 1L;
        private final transient Class<?> type;
        private final String expected;
        private final String field;
        private final transient Map<String, String> assigned;

        FieldProblem(JsonParser p, String message, Class<?> type, String expected, String field,
                     Map<String, String> assigned, Throwable cause) {
            super(p, message, cause);
            _location = p.currentLocation(); // where the parser stopped, not where its token began
            this.type = type;
            this.expected = expected;
            this.field = field;
            this.assigned = assigned;
        }

        /** The record that lacks a required field, or null for a refused value. */
        public Class<?> type() {
            return type;
        }

        public boolean missing() {
            return type != null;
        }

        public String field() {
            return field;
        }

        /** What the field must hold ("a string", "an integer", ...), or null when its value was refused. */
        public String expected() {
            return expected;
        }

        public Map<String, String> assigned() {
            return assigned == null ? Map.of() : assigned;
        }

        /** Why a value was refused, in the words of what refused it (the record, the instant's parser). */
        public String refusal() {
            return getCause() != null ? getCause().getMessage() : getOriginalMessage();
        }
    }

    /**
     * Where the values of a type begin and end in what a write produces: asked for by a writer
     * with the type as an attribute ({@code writer.withAttribute(Type.class, new Offsets(out))}),
     * whose generator writes to {@code out}, and by a reader the same way (ends only: the offset
     * past each value's closing brace in its input).
     */
    public static final class Offsets {
        private final ByteArrayOutputStream out;
        private int[] starts = new int[16];
        private int[] ends = new int[16];
        private int size;

        /** For a write to {@code out}; null for a read. */
        public Offsets(ByteArrayOutputStream out) {
            this.out = out;
        }

        void started(JsonGenerator g) {
            if (size == starts.length) {
                starts = Arrays.copyOf(starts, size * 2);
                ends = Arrays.copyOf(ends, size * 2);
            }
            starts[size] = out.size() + g.getOutputBuffered();
        }

        void ended(JsonGenerator g) {
            ends[size++] = out.size() + g.getOutputBuffered();
        }

        void ended(long offset) {
            if (size == ends.length) {
                starts = Arrays.copyOf(starts, size * 2);
                ends = Arrays.copyOf(ends, size * 2);
            }
            ends[size++] = (int) offset;
        }

        /** Where the first value began (its separator and indentation included), or -1 if there was none. */
        public int firstStart() {
            return size == 0 ? -1 : starts[0];
        }

        /** The offset just past each value. */
        public int[] ends() {
            return Arrays.copyOf(ends, size);
        }
    }

    /** Notes where each value of its type begins and ends for a writer that asks ({@link Offsets}). */
    private static final class Placed extends StdSerializer<Object> implements ContextualSerializer, ResolvableSerializer {
        private static final long serialVersionUID = 1L;
        private final JsonSerializer<Object> delegate;

        @SuppressWarnings("unchecked")
        Placed(JsonSerializer<?> delegate) {
            super((Class<Object>) delegate.handledType());
            this.delegate = (JsonSerializer<Object>) delegate;
        }

        @Override
        public void resolve(SerializerProvider provider) throws JsonMappingException {
            if (delegate instanceof ResolvableSerializer r) {
                r.resolve(provider);
            }
        }

        @Override
        public JsonSerializer<?> createContextual(SerializerProvider provider, BeanProperty property)
                throws JsonMappingException {
            if (delegate instanceof ContextualSerializer c) {
                JsonSerializer<?> d = c.createContextual(provider, property);
                return d == delegate ? this : new Placed(d);
            }
            return this;
        }

        @Override
        public boolean isEmpty(SerializerProvider provider, Object value) {
            return delegate.isEmpty(provider, value);
        }

        @Override
        public void serializeWithType(Object value, JsonGenerator g, SerializerProvider provider, TypeSerializer types)
                throws IOException {
            delegate.serializeWithType(value, g, provider, types);
        }

        @Override
        public void serialize(Object value, JsonGenerator g, SerializerProvider provider) throws IOException {
            if (provider.getAttribute(handledType()) instanceof Offsets o) {
                o.started(g);
                delegate.serialize(value, g, provider);
                o.ended(g);
            } else {
                delegate.serialize(value, g, provider);
            }
        }
    }

    private static final class Placing extends BeanSerializerModifier {
        private static final long serialVersionUID = 1L;

        @Override
        public JsonSerializer<?> modifySerializer(SerializationConfig config, BeanDescription beanDesc,
                                                  JsonSerializer<?> serializer) {
            return new Placed(serializer);
        }
    }

    private static final class Holder {
        static final ObjectMapper MAPPER = build(new JsonFactory());
    }

    private static final class IdKeyed {
        static final ObjectMapper MAPPER = build(JsonSupport.idKeyedFactory());
    }

    private static ObjectMapper build(JsonFactory factory) {
        return JsonMapper.builder(factory)
                .addModule(StrictValues.module()
                        .setSerializerModifier(new Placing()))
                .enable(DeserializationFeature.FAIL_ON_IGNORED_PROPERTIES)
                // a problem is thrown as found, not wrapped in one naming the path to it
                .disable(DeserializationFeature.WRAP_EXCEPTIONS)
                // members made accessible only where they are not public
                .disable(MapperFeature.OVERRIDE_PUBLIC_ACCESS_MODIFIERS)
                .build();
    }
}
