package dev.agentx.clarify.files;

import com.fasterxml.jackson.annotation.JsonFormat;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonStreamContext;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.BeanDescription;
import com.fasterxml.jackson.databind.DeserializationConfig;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.JavaType;
import com.fasterxml.jackson.databind.JsonDeserializer;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.SerializerProvider;
import com.fasterxml.jackson.databind.deser.BeanDeserializerBase;
import com.fasterxml.jackson.databind.deser.BeanDeserializerBuilder;
import com.fasterxml.jackson.databind.deser.BeanDeserializerModifier;
import com.fasterxml.jackson.databind.deser.SettableBeanProperty;
import com.fasterxml.jackson.databind.deser.ValueInstantiator;
import com.fasterxml.jackson.databind.deser.impl.PropertyValueBuffer;
import com.fasterxml.jackson.databind.deser.std.DelegatingDeserializer;
import com.fasterxml.jackson.databind.deser.std.StdScalarDeserializer;
import com.fasterxml.jackson.databind.exc.ValueInstantiationException;
import com.fasterxml.jackson.databind.module.SimpleModule;
import com.fasterxml.jackson.databind.ser.std.StdScalarSerializer;
import com.fasterxml.jackson.databind.type.CollectionType;
import java.io.IOException;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The strict reading of {@link StateJson}: the values of the state files' fields (text, whole
 * numbers, true or false, instants), what wraps Jackson's own deserializers of records, lists and
 * enums, and the check of a record's required fields, each refusal a {@link StateJson.FieldProblem}
 * located where the parser stopped.
 */
final class StrictValues {
    private StrictValues() {
    }

    /** The module: these values, and the wrapping of what Jackson builds for records, lists and enums. */
    static SimpleModule module() {
        return new SimpleModule("state-files")
                .addDeserializer(String.class, new Text())
                .addDeserializer(Integer.class, new WholeNumber<>(Integer.class, false, null))
                .addDeserializer(Integer.TYPE, new WholeNumber<>(Integer.TYPE, false, 0))
                .addDeserializer(Long.class, new WholeNumber<>(Long.class, true, null))
                .addDeserializer(Long.TYPE, new WholeNumber<>(Long.TYPE, true, 0L))
                .addDeserializer(Boolean.class, new Truth(Boolean.class, null))
                .addDeserializer(Boolean.TYPE, new Truth(Boolean.TYPE, Boolean.FALSE))
                .addDeserializer(Instant.class, new Moment())
                .addSerializer(Instant.class, new MomentText())
                .setDeserializerModifier(new Strictness());
    }

    /**
     * A refused value of the field the parser is at: {@code field 'NAME' must be EXPECTED}, or
     * {@code the JSON must be EXPECTED} for the top-level value.
     */
    static StateJson.FieldProblem wrong(JsonParser p, String expected, boolean element) {
        String field = fieldOf(p, element);
        String message = field == null ? "the JSON must be " + expected : "field '" + field + "' must be " + expected;
        return new StateJson.FieldProblem(p, message, null, expected, field, null, null);
    }

    /** The context of the value the parser is at (a structure's start opens a context of its own). */
    private static JsonStreamContext valueContext(JsonParser p) {
        JsonStreamContext c = p.getParsingContext();
        JsonToken t = p.currentToken();
        return t != null && t.isStructStart() && c.getParent() != null ? c.getParent() : c;
    }

    /** The field of the value the parser is at; for an element of an array, the array's field (with "[]"). */
    private static String fieldOf(JsonParser p, boolean element) {
        JsonStreamContext c = valueContext(p);
        if (c.inArray()) {
            String array = c.getParent() == null ? null : c.getParent().getCurrentName();
            return element ? array + "[]" : array;
        }
        return c.getCurrentName();
    }

    private static final class Text extends StdScalarDeserializer<String> {
        private static final long serialVersionUID = 1L;

        Text() {
            super(String.class);
        }

        @Override
        public String deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
            if (p.hasToken(JsonToken.VALUE_STRING)) {
                return p.getText();
            }
            throw wrong(p, "a string", false);
        }

        @Override
        public String getNullValue(DeserializationContext ctxt) throws JsonMappingException {
            throw wrong(ctxt.getParser(), "a string", false);
        }

        @Override
        public Object getAbsentValue(DeserializationContext ctxt) {
            return null;
        }
    }

    private static final class WholeNumber<T> extends StdScalarDeserializer<T> {
        private static final long serialVersionUID = 1L;
        private final boolean wide;
        private final T absent;

        WholeNumber(Class<T> type, boolean wide, T absent) {
            super(type);
            this.wide = wide;
            this.absent = absent;
        }

        @Override
        @SuppressWarnings("unchecked")
        public T deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
            if (!p.hasToken(JsonToken.VALUE_NUMBER_INT)) {
                throw wrong(p, "an integer", false);
            }
            return (T) (wide ? (Object) JsonNumbers.longValue(p) : (Object) JsonNumbers.intValue(p));
        }

        @Override
        public T getNullValue(DeserializationContext ctxt) throws JsonMappingException {
            throw wrong(ctxt.getParser(), "an integer", false);
        }

        @Override
        public Object getAbsentValue(DeserializationContext ctxt) {
            return absent;
        }
    }

    private static final class Truth extends StdScalarDeserializer<Boolean> {
        private static final long serialVersionUID = 1L;
        private final Boolean absent;

        Truth(Class<Boolean> type, Boolean absent) {
            super(type);
            this.absent = absent;
        }

        @Override
        public Boolean deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
            if (p.hasToken(JsonToken.VALUE_TRUE) || p.hasToken(JsonToken.VALUE_FALSE)) {
                return p.hasToken(JsonToken.VALUE_TRUE);
            }
            throw wrong(p, "true or false", false);
        }

        @Override
        public Boolean getNullValue(DeserializationContext ctxt) throws JsonMappingException {
            throw wrong(ctxt.getParser(), "true or false", false);
        }

        @Override
        public Object getAbsentValue(DeserializationContext ctxt) {
            return absent;
        }
    }

    private static final class Moment extends StdScalarDeserializer<Instant> {
        private static final long serialVersionUID = 1L;

        Moment() {
            super(Instant.class);
        }

        @Override
        public Instant deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
            if (!p.hasToken(JsonToken.VALUE_STRING)) {
                throw wrong(p, "a string", false);
            }
            String s = p.getText();
            try {
                return IsoInstant.parse(s);
            } catch (DateTimeParseException e) {
                String field = fieldOf(p, false);
                throw new StateJson.FieldProblem(p, "field '" + field + "' must be an ISO-8601 instant like "
                        + "2026-02-26T10:00:00Z, got '" + s + "'", null, null, field, null, e);
            }
        }

        @Override
        public Instant getNullValue(DeserializationContext ctxt) throws JsonMappingException {
            throw wrong(ctxt.getParser(), "a string", false);
        }

        @Override
        public Object getAbsentValue(DeserializationContext ctxt) {
            return null;
        }
    }

    private static final class MomentText extends StdScalarSerializer<Instant> {
        private static final long serialVersionUID = 1L;

        MomentText() {
            super(Instant.class);
        }

        @Override
        public void serialize(Instant value, JsonGenerator g, SerializerProvider provider) throws IOException {
            // toString's text without DateTimeFormatter: a compaction of the outbox writes a million
            g.writeString(IsoInstant.append(new StringBuilder(30), value).toString());
        }
    }

    /**
     * Around every record, list and enum the mapper reads: the token each must start with, null
     * refused in the words of the field, and (records) the end of each value noted for a reader
     * that asks ({@link StateJson.Offsets}).
     */
    private static final class Checked extends DelegatingDeserializer {
        private static final long serialVersionUID = 1L;
        private final JsonToken start;
        private final String expected;
        private final boolean element;

        Checked(JsonDeserializer<?> delegate, JsonToken start, String expected, boolean element) {
            super(delegate);
            this.start = start;
            this.expected = expected;
            this.element = element;
        }

        @Override
        protected JsonDeserializer<?> newDelegatingInstance(JsonDeserializer<?> delegate) {
            return new Checked(delegate, start, expected, element);
        }

        @Override
        public Object deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
            // a record's deserializer is also called inside its object, past a type id
            if (!p.hasToken(start) && !(start == JsonToken.START_OBJECT
                    && (p.hasToken(JsonToken.FIELD_NAME) || p.hasToken(JsonToken.END_OBJECT)))) {
                throw wrong(p, expected, element);
            }
            Object value;
            try {
                value = super.deserialize(p, ctxt);
            } catch (IllegalArgumentException e) {
                if (start != JsonToken.VALUE_STRING) {
                    throw e;
                }
                // an enum's factory refused the text: its message says why
                throw new StateJson.FieldProblem(p, e.getMessage(), null, null, fieldOf(p, false), null, e);
            }
            if (element) {
                Object offsets = ctxt.getAttribute(handledType());
                if (offsets instanceof StateJson.Offsets o) {
                    o.ended(p.currentLocation().getByteOffset());
                }
            }
            return value;
        }

        @Override
        public Object getNullValue(DeserializationContext ctxt) throws JsonMappingException {
            throw wrong(ctxt.getParser(), expected, element);
        }

        @Override
        public Object getAbsentValue(DeserializationContext ctxt) {
            return null;
        }
    }

    /** A record's constructor behind the check of its required fields, its refusals in its own words. */
    private static final class Required extends ValueInstantiator.Delegating {
        private static final long serialVersionUID = 1L;

        Required(ValueInstantiator delegate) {
            super(delegate);
        }

        @Override
        public ValueInstantiator createContextual(DeserializationContext ctxt, BeanDescription beanDesc)
                throws JsonMappingException {
            ValueInstantiator d = delegate().createContextual(ctxt, beanDesc);
            return d == delegate() ? this : new Required(d);
        }

        @Override
        public Object createFromObjectWith(DeserializationContext ctxt, SettableBeanProperty[] props,
                                           PropertyValueBuffer buffer) throws IOException {
            for (SettableBeanProperty prop : props) {
                if (prop.isRequired() && !buffer.hasParameter(prop)) {
                    Map<String, String> read = new LinkedHashMap<>();
                    for (SettableBeanProperty q : props) {
                        if (buffer.hasParameter(q) && buffer.getParameter(q) instanceof String s) {
                            read.put(q.getName(), s);
                        }
                    }
                    throw new StateJson.FieldProblem(ctxt.getParser(), "lacks field '" + prop.getName() + "'",
                            getValueClass(), null, prop.getName(), read, null);
                }
            }
            try {
                return delegate().createFromObjectWith(ctxt, props, buffer);
            } catch (ValueInstantiationException e) {
                if (e.getCause() instanceof IllegalArgumentException refused) {
                    throw new StateJson.FieldProblem(ctxt.getParser(), refused.getMessage(), null, null, null, null,
                            refused);
                }
                throw e;
            }
        }
    }

    /** Puts {@link Checked} and {@link Required} around what Jackson builds; unknown fields met where they are. */
    private static final class Strictness extends BeanDeserializerModifier {
        private static final long serialVersionUID = 1L;

        @Override
        public BeanDeserializerBuilder updateBuilder(DeserializationConfig config, BeanDescription beanDesc,
                                                     BeanDeserializerBuilder builder) {
            // every field the type declares is "included": any other is met at once, where it
            // stands, instead of being buffered to the end of a record's object
            ValueInstantiator creator = builder.getValueInstantiator();
            SettableBeanProperty[] params = creator == null ? null : creator.getFromObjectArguments(config);
            if (params != null) {
                for (SettableBeanProperty p : params) {
                    builder.addIncludable(p.getName());
                }
                builder.setValueInstantiator(new Required(creator));
            }
            for (Iterator<SettableBeanProperty> it = builder.getProperties(); it.hasNext(); ) {
                builder.addIncludable(it.next().getName());
            }
            return builder;
        }

        @Override
        public JsonDeserializer<?> modifyDeserializer(DeserializationConfig config, BeanDescription beanDesc,
                                                      JsonDeserializer<?> deserializer) {
            // called for the custom and standard deserializers of values too: only records are wrapped
            if (!(deserializer instanceof BeanDeserializerBase)) {
                return deserializer;
            }
            // a record written as an array (@JsonFormat(shape = ARRAY)) starts with one
            return beanDesc.findExpectedFormat().getShape() == JsonFormat.Shape.ARRAY
                    ? new Checked(deserializer, JsonToken.START_ARRAY, "an array", true)
                    : new Checked(deserializer, JsonToken.START_OBJECT, "an object", true);
        }

        @Override
        public JsonDeserializer<?> modifyCollectionDeserializer(DeserializationConfig config, CollectionType type,
                BeanDescription beanDesc, JsonDeserializer<?> deserializer) {
            String expected = type.getContentType().hasRawClass(String.class) ? "an array of strings" : "an array";
            return new Checked(deserializer, JsonToken.START_ARRAY, expected, false);
        }

        @Override
        public JsonDeserializer<?> modifyEnumDeserializer(DeserializationConfig config, JavaType type,
                                                          BeanDescription beanDesc, JsonDeserializer<?> deserializer) {
            return new Checked(deserializer, JsonToken.VALUE_STRING, "a string", false);
        }
    }
}
