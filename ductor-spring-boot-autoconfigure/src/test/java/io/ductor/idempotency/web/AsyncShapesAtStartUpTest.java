package io.ductor.idempotency.web;

import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.boot.webmvc.autoconfigure.WebMvcAutoConfiguration;
import org.springframework.http.HttpEntity;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.context.request.async.DeferredResult;
import org.springframework.web.context.request.async.WebAsyncTask;
import org.springframework.web.servlet.mvc.method.annotation.ResponseBodyEmitter;
import org.springframework.web.servlet.mvc.method.annotation.SseEmitter;
import org.springframework.web.servlet.mvc.method.annotation.StreamingResponseBody;

import io.ductor.autoconfigure.DuctorAutoConfiguration;
import io.ductor.idempotency.autoconfigure.DuctorIdempotencyAutoConfiguration;
import io.ductor.test.PostgresExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every return type Spring MVC answers asynchronously, resolved through
 * {@code ResponseEntity} and {@code HttpEntity}: refused at start-up in
 * {@code ONE_TRANSACTION}, with a message naming the handler, its type and the mode that
 * works; accepted in {@code TWO_PHASE}.
 */
class AsyncShapesAtStartUpTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
				DataSourceTransactionManagerAutoConfiguration.class, TransactionAutoConfiguration.class,
				JacksonAutoConfiguration.class, WebMvcAutoConfiguration.class, DuctorAutoConfiguration.class,
				DuctorIdempotencyAutoConfiguration.class))
		.withPropertyValues("spring.datasource.url=" + postgres.jdbcUrl(),
				"spring.datasource.username=" + postgres.username(),
				"spring.datasource.password=" + ((postgres.password() != null) ? postgres.password() : ""),
				"spring.datasource.hikari.maximum-pool-size=2");

	static Stream<Arguments> shapes() {
		return Stream.of(Arguments.of(CallableShape.class, "java.util.concurrent.Callable<java.lang.String>"),
				Arguments.of(DeferredShape.class, "DeferredResult<java.lang.String>"),
				Arguments.of(FutureShape.class, "java.util.concurrent.CompletableFuture<java.lang.String>"),
				Arguments.of(StageShape.class, "java.util.concurrent.CompletionStage"),
				Arguments.of(WebAsyncTaskShape.class, "WebAsyncTask<java.lang.String>"),
				Arguments.of(StreamingShape.class, "StreamingResponseBody"),
				Arguments.of(EntityStreamingShape.class,
						"ResponseEntity<org.springframework.web.servlet.mvc"
								+ ".method.annotation.StreamingResponseBody>"),
				Arguments.of(HttpEntityEmitterShape.class, "HttpEntity<"), Arguments.of(SseShape.class, "SseEmitter"),
				Arguments.of(EmitterShape.class, "ResponseBodyEmitter"));
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("shapes")
	void anAsynchronousShapeFailsStartUpInOneTransactionModeNamingTheHandlerAndTwoPhase(Class<?> controller,
			String type) {
		this.runner.withUserConfiguration(controller).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure())
				.hasStackTraceContaining("@Idempotent handler " + controller.getName() + "#answer")
				.hasStackTraceContaining(type)
				.hasStackTraceContaining("answers asynchronously")
				.hasStackTraceContaining("@Idempotent(mode = IdempotencyMode.TWO_PHASE)");
		});
	}

	@Test
	void everyAsynchronousShapeStartsInTwoPhaseModeAndTypesThatSayNothingAreCheckedWhenTheyAnswer() {
		this.runner.withUserConfiguration(TwoPhaseShapes.class, HiddenShapes.class)
			.run((context) -> assertThat(context).hasNotFailed());
	}

	@Test
	void aPoolThatIsNoIdentifierFailsStartUp() {
		this.runner.withUserConfiguration(BadPool.class).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).hasStackTraceContaining(BadPool.class.getName() + "#answer")
				.hasStackTraceContaining("pool must not contain control characters");
		});
	}

	@RestController
	static class CallableShape {

		@PostMapping("/a")
		@Idempotent
		Callable<String> answer() {
			return () -> "a";
		}

	}

	@RestController
	static class DeferredShape {

		@PostMapping("/a")
		@Idempotent
		DeferredResult<String> answer() {
			return new DeferredResult<>();
		}

	}

	@RestController
	static class FutureShape {

		@PostMapping("/a")
		@Idempotent
		CompletableFuture<String> answer() {
			return CompletableFuture.completedFuture("a");
		}

	}

	@RestController
	static class StageShape {

		@PostMapping("/a")
		@Idempotent
		CompletionStage<ResponseEntity<String>> answer() {
			return CompletableFuture.completedFuture(ResponseEntity.ok("a"));
		}

	}

	@RestController
	static class WebAsyncTaskShape {

		@PostMapping("/a")
		@Idempotent
		WebAsyncTask<String> answer() {
			return new WebAsyncTask<>(() -> "a");
		}

	}

	@RestController
	static class StreamingShape {

		@PostMapping("/a")
		@Idempotent
		StreamingResponseBody answer() {
			return (out) -> out.write('a');
		}

	}

	@RestController
	static class EntityStreamingShape {

		@PostMapping("/a")
		@Idempotent
		ResponseEntity<StreamingResponseBody> answer() {
			return ResponseEntity.ok((out) -> out.write('a'));
		}

	}

	@RestController
	static class HttpEntityEmitterShape {

		@PostMapping("/a")
		@Idempotent
		HttpEntity<ResponseBodyEmitter> answer() {
			return new HttpEntity<>(new ResponseBodyEmitter());
		}

	}

	@RestController
	static class SseShape {

		@PostMapping("/a")
		@Idempotent
		SseEmitter answer() {
			return new SseEmitter();
		}

	}

	@RestController
	static class EmitterShape {

		@PostMapping("/a")
		@Idempotent
		ResponseBodyEmitter answer() {
			return new ResponseBodyEmitter();
		}

	}

	@RestController
	static class TwoPhaseShapes {

		@PostMapping("/callable")
		@Idempotent(mode = IdempotencyMode.TWO_PHASE)
		Callable<String> callable() {
			return () -> "a";
		}

		@PostMapping("/entity-streaming")
		@Idempotent(mode = IdempotencyMode.TWO_PHASE)
		ResponseEntity<StreamingResponseBody> entityStreaming() {
			return ResponseEntity.ok((out) -> out.write('a'));
		}

		@PostMapping("/sse")
		@Idempotent(mode = IdempotencyMode.TWO_PHASE)
		SseEmitter sse() {
			return new SseEmitter();
		}

	}

	@RestController
	static class HiddenShapes {

		@PostMapping("/object")
		@Idempotent
		Object object() {
			return CompletableFuture.completedFuture("a");
		}

		@PostMapping("/wildcard")
		@Idempotent
		ResponseEntity<?> wildcard() {
			return ResponseEntity.ok("a");
		}

	}

	@RestController
	static class BadPool {

		@PostMapping("/a")
		@Idempotent(pool = "orders\n")
		String answer() {
			return "a";
		}

	}

}
