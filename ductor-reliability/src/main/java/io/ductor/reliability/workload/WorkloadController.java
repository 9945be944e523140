package io.ductor.reliability.workload;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;

import javax.sql.DataSource;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;

import io.ductor.IdempotencyKeyReuseException;
import io.ductor.effect.internal.EffectDrainer;
import io.ductor.idempotency.Fingerprints;
import io.ductor.idempotency.IdempotencyKeyInFlightException;
import io.ductor.idempotency.IdempotencyService;
import io.ductor.idempotency.IdempotentRequest;
import io.ductor.idempotency.IdempotentResult;
import io.ductor.idempotency.InvalidIdempotencyKeyException;
import io.ductor.idempotency.web.Idempotent;
import io.ductor.jdbc.internal.PostgresNotificationListener;
import io.ductor.worker.internal.PeriodicWorker;

/**
 * The workload's HTTP side.
 * <ul>
 * <li>{@code POST /orders}: an order, exactly once per {@code Idempotency-Key} and tenant
 * ({@code X-Tenant}), through {@link IdempotencyService#executeInTransaction}: the order
 * row, its {@code confirm} effect and the completed idempotency record commit
 * together.</li>
 * <li>{@code POST /echo}: an {@link Idempotent @Idempotent} handler answering with its
 * body.</li>
 * <li>{@code GET /wl/status}: what the workload and Ductor's workers are doing, for the
 * driver.</li>
 * </ul>
 */
@RestController
public class WorkloadController {

	private final IdempotencyService idempotency;

	private final JdbcClient jdbc;

	private final Receivers receivers;

	private final WorkloadProperties properties;

	private final TickLoop ticks;

	private final ObjectProvider<PostgresNotificationListener> listener;

	private final ObjectProvider<EffectDrainer> drainer;

	private final ObjectProvider<PeriodicWorker> workers;

	public WorkloadController(IdempotencyService idempotency, DataSource dataSource, Receivers receivers,
			WorkloadProperties properties, TickLoop ticks, ObjectProvider<PostgresNotificationListener> listener,
			ObjectProvider<EffectDrainer> drainer, ObjectProvider<PeriodicWorker> workers) {
		this.idempotency = idempotency;
		this.jdbc = JdbcClient.create(dataSource);
		this.receivers = receivers;
		this.properties = properties;
		this.ticks = ticks;
		this.listener = listener;
		this.drainer = drainer;
		this.workers = workers;
	}

	/** An accepted order. */
	public record Order(String id, String key) {
	}

	@PostMapping("/orders")
	public Order order(@RequestHeader("Idempotency-Key") String key,
			@RequestHeader(name = "X-Tenant", defaultValue = "") String tenant, @RequestBody String body) {
		IdempotentRequest request = new IdempotentRequest(tenant, "orders", key, Fingerprints.sha256(body));
		IdempotentResult<Order> result = this.idempotency.executeInTransaction(request, Order.class, () -> {
			String id = "o-" + UUID.randomUUID();
			this.jdbc.sql("INSERT INTO wl_orders (id, tenant, idempotency_key, body, instance) VALUES (?, ?, ?, ?, ?)")
				.params(id, tenant, key, body, this.properties.instance())
				.update();
			this.receivers.confirm(id);
			return new Order(id, key);
		});
		return result.value();
	}

	@Idempotent
	@PostMapping("/echo")
	public Map<String, Object> echo(@RequestBody Map<String, Object> body) {
		Map<String, Object> answer = new LinkedHashMap<>(body);
		answer.put("echoedBy", this.properties.instance());
		answer.put("nonce", UUID.randomUUID().toString());
		return answer;
	}

	/** Stops ticking, so that the driver can check a database that no longer moves. */
	@PostMapping("/wl/quiesce")
	public Map<String, Object> quiesce() {
		this.ticks.stop();
		return status();
	}

	@GetMapping("/wl/status")
	public Map<String, Object> status() {
		Map<String, Object> status = new LinkedHashMap<>();
		status.put("instance", this.properties.instance());
		status.put("pid", ProcessHandle.current().pid());
		PostgresNotificationListener listener = this.listener.getIfAvailable();
		status.put("listenerConnected", (listener != null) && listener.isConnected());
		EffectDrainer drainer = this.drainer.getIfAvailable();
		status.put("drainerRunning", (drainer != null) && drainer.isRunning());
		status.put("drainerOwner", (drainer != null) ? drainer.owner() : null);
		long[] counts = this.ticks.counts();
		status.put("ticksApplied", counts[0]);
		status.put("ticksDuplicate", counts[1]);
		status.put("ticksFailed", counts[2]);
		Map<String, Object> workers = new LinkedHashMap<>();
		for (PeriodicWorker worker : this.workers.orderedStream().toList()) {
			workers.put(worker.getName(), worker.status());
		}
		status.put("workers", workers);
		return status;
	}

	@ExceptionHandler(InvalidIdempotencyKeyException.class)
	ResponseEntity<ProblemDetail> invalidKey(InvalidIdempotencyKeyException ex) {
		return problem(HttpStatus.BAD_REQUEST, ex);
	}

	@ExceptionHandler(IllegalArgumentException.class)
	ResponseEntity<ProblemDetail> invalidArgument(IllegalArgumentException ex) {
		return problem(HttpStatus.BAD_REQUEST, ex);
	}

	@ExceptionHandler(IdempotencyKeyReuseException.class)
	ResponseEntity<ProblemDetail> mismatch(IdempotencyKeyReuseException ex) {
		return problem(HttpStatus.UNPROCESSABLE_CONTENT, ex);
	}

	@ExceptionHandler(IdempotencyKeyInFlightException.class)
	ResponseEntity<ProblemDetail> inFlight(IdempotencyKeyInFlightException ex) {
		return problem(HttpStatus.CONFLICT, ex);
	}

	private static ResponseEntity<ProblemDetail> problem(HttpStatus status, Exception ex) {
		return ResponseEntity.status(status).body(ProblemDetail.forStatusAndDetail(status, ex.getMessage()));
	}

}
