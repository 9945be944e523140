package io.ductor.effect;

import java.util.LinkedHashMap;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.ductor.effect.internal.TraceContexts;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@code trace_context} column's hand-written JSON: what it writes reads back,
 * whatever the values hold; PostgreSQL's own printing of a {@code jsonb} value reads;
 * anything else falls back to a JSON parser, and what no parser reads is no context.
 */
class TraceContextsTest {

	@Test
	void whatIsWrittenReadsBackWithQuotesBackslashesAndControlCharacters() {
		Map<String, String> fields = new LinkedHashMap<>();
		fields.put("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
		fields.put("tracestate", "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7");
		fields.put("baggage", "tenant=\"acme\\eu\"\n\tsecond\u0001line/é");
		String json = TraceContexts.encode(fields);
		assertThat(json).startsWith("{\"traceparent\":\"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01\",");
		assertThat(TraceContexts.decode(json)).isEqualTo(fields);
	}

	@Test
	void noFieldsIsNoColumn() {
		assertThat(TraceContexts.encode(Map.of())).isNull();
		assertThat(TraceContexts.encode(null)).isNull();
		assertThat(TraceContexts.decode(null)).isEmpty();
	}

	@Test
	void postgresqlsPrintingOfAJsonbObjectReads() {
		assertThat(TraceContexts.decode("{\"baggage\": \"a=1\", \"traceparent\": \"00-ab-cd-01\"}"))
			.containsExactlyInAnyOrderEntriesOf(Map.of("baggage", "a=1", "traceparent", "00-ab-cd-01"));
		assertThat(TraceContexts.decode("{}")).isEmpty();
		// a \\u escape is the JSON parser's to read
		assertThat(TraceContexts.decode("{\"k\": \"a\\u0001b\"}")).containsEntry("k", "a\u0001b");
	}

	@Test
	void whatIsNoFlatObjectOfStringsIsNoContext() {
		assertThat(TraceContexts.decode("[\"not\", \"an\", \"object\"]")).isEmpty();
		assertThat(TraceContexts.decode("{\"traceparent\": ")).isEmpty();
		assertThat(TraceContexts.decode("not json")).isEmpty();
		assertThat(TraceContexts.decode("{\"a\": {\"b\": \"c\"}}")).isEmpty();
	}

}
