package io.ductor.effect.internal;

import java.lang.reflect.Method;
import java.time.DayOfWeek;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;

import org.junit.jupiter.api.Test;

import org.springframework.context.expression.MethodBasedEvaluationContext;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.expression.EvaluationException;
import org.springframework.expression.Expression;
import org.springframework.expression.spel.standard.SpelExpressionParser;

import io.ductor.effect.DurableEffectException;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A key expression parsed once and evaluated over a small context of its own (and, for
 * concatenations of literals and variables, without SpEL's interpreter) gives every call
 * what the per-call {@link MethodBasedEvaluationContext} gave: the same key, or the same
 * failure.
 */
class EffectExpressionTest {

	static final SpelExpressionParser parser = new SpelExpressionParser();

	public static class Methods {

		public void call(Object first, Object second, Object third) {
		}

	}

	static final Method method = Arrays.stream(Methods.class.getMethods())
		.filter((candidate) -> candidate.getName().equals("call"))
		.findFirst()
		.orElseThrow();

	static final String[] names = java.util.Objects
		.requireNonNullElse(new DefaultParameterNameDiscoverer().getParameterNames(method), new String[3]);

	/** What every earlier release did per call. */
	static String reference(Expression expression, Object[] args) {
		Object value;
		try {
			value = expression
				.getValue(new MethodBasedEvaluationContext(null, method, args, new DefaultParameterNameDiscoverer()));
		}
		catch (EvaluationException ex) {
			return "failed: " + ex.getMessage();
		}
		catch (RuntimeException ex) {
			return "threw " + ex.getClass().getName();
		}
		return (value != null) ? value.toString() : "evaluated to null";
	}

	static String prepared(Expression expression, Object[] args) {
		EffectExpression prepared = new EffectExpression(expression, "key", "e", names);
		try {
			return prepared.evaluate(args);
		}
		catch (DurableEffectException ex) {
			if (ex.getMessage().endsWith("evaluated to null")) {
				return "evaluated to null";
			}
			return "failed: " + ex.getCause().getMessage();
		}
		catch (RuntimeException ex) {
			return "threw " + ex.getClass().getName();
		}
	}

	@Test
	void everyExpressionGivesWhatThePerCallContextGave() {
		List<String> expressions = List.of("#first", "#p0", "#a1", "'k:' + #first", "#first + ':' + #second",
				"'k:' + #p0 + ':' + #a1 + ':' + #third", "#first + #second", "#first + #second + 'x'",
				"'x' + (#first + #second)", "'k:' + #missing", "#missing", "#p3", "#p01", "'constant'",
				"#first.toString() + '!'", "(#tmp = #first) + ':' + #tmp", "#first ?: 'none'", "'k:' + #this",
				"T(java.lang.String).valueOf(#first) + #second", "#first == null ? 'null-first' : 'k:' + #first",
				"#root", "#first.length()", "'k' + #first + #second + #third");
		List<Object> values = Arrays.asList("text", "", 42L, -7, (short) 3, (byte) 1, true, 'c', null, 1.5,
				DayOfWeek.MONDAY, UUID.fromString("2b1d7a5e-0000-4000-8000-000000000001"), List.of(1, 2));
		List<String> mismatches = new ArrayList<>();
		int compared = 0;
		for (String text : expressions) {
			Expression expression = parser.parseExpression(text);
			for (Object first : values) {
				for (Object second : values) {
					Object[] args = { first, second, "third" };
					String expected = reference(expression, args);
					String actual = prepared(expression, args);
					compared++;
					if (!expected.equals(actual)) {
						mismatches
							.add(text + " over " + Arrays.toString(args) + ": " + actual + " instead of " + expected);
					}
				}
			}
		}
		assertThat(mismatches).isEmpty();
		assertThat(compared).isEqualTo(expressions.size() * values.size() * values.size());
	}

	@Test
	void anExpressionEvaluatedByManyThreadsAtOnceKeepsEachCallsArguments() throws Exception {
		EffectExpression expression = new EffectExpression(
				parser.parseExpression("'k:' + #first + ':' + #second.length()"), "key", "e", names);
		List<Thread> threads = new ArrayList<>();
		List<String> wrong = java.util.Collections.synchronizedList(new ArrayList<>());
		for (int t = 0; t < 4; t++) {
			int thread = t;
			threads.add(new Thread(() -> {
				for (int i = 0; i < 2_000; i++) {
					String second = "x".repeat(i % 7);
					String key = expression.evaluate(new Object[] { thread * 10_000L + i, second, null });
					if (!key.equals("k:" + (thread * 10_000L + i) + ":" + second.length())) {
						wrong.add(key);
					}
				}
			}));
		}
		threads.forEach(Thread::start);
		for (Thread thread : threads) {
			thread.join();
		}
		assertThat(wrong).isEmpty();
	}

}
