package io.ductor.reliability.payments;

import java.io.IOException;
import java.net.URI;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Map;
import java.util.UUID;

import jakarta.servlet.http.Cookie;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Propagation;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.PutMapping;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RequestPart;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.multipart.MultipartFile;
import org.springframework.web.server.ResponseStatusException;

import io.ductor.idempotency.web.Idempotent;

/**
 * A payments application written from the README alone: transfers by {@code PUT} with a
 * form body, statement uploads by multipart, an audit written in a transaction of its
 * own, a rate limit answering 429, a login that sets a cookie and a check that refuses
 * with {@link ResponseStatusException}. Every request writes one row per key.
 */
@SpringBootApplication
public class PaymentsApplication {

	/** The schema, created by the test before the application starts. */
	public static final String SCHEMA = """
			CREATE TABLE transfer (id text PRIMARY KEY, transfer_key text NOT NULL, to_account text NOT NULL,
			    amount integer NOT NULL);
			CREATE TABLE statement (id text PRIMARY KEY, upload_key text NOT NULL, name text NOT NULL,
			    size bigint NOT NULL, sha256 text NOT NULL);
			CREATE TABLE audit (audit_key text NOT NULL, what text NOT NULL)""";

	@Service
	public static class Payments {

		private final JdbcClient jdbc;

		private final Audit audit;

		Payments(JdbcClient jdbc, Audit audit) {
			this.jdbc = jdbc;
			this.audit = audit;
		}

		@Transactional
		public String transfer(String key, String to, int amount) {
			String id = "t-" + UUID.randomUUID();
			this.jdbc.sql("INSERT INTO transfer (id, transfer_key, to_account, amount) VALUES (?, ?, ?, ?)")
				.params(id, key, to, amount)
				.update();
			return id;
		}

		@Transactional
		public String audited(String key, String to, int amount) {
			this.audit.record(key, "transfer to " + to);
			return transfer(key, to, amount);
		}

		@Transactional
		public String statement(String key, MultipartFile file) throws IOException {
			String id = "s-" + UUID.randomUUID();
			this.jdbc.sql("INSERT INTO statement (id, upload_key, name, size, sha256) VALUES (?, ?, ?, ?, ?)")
				.params(id, key, file.getOriginalFilename(), file.getSize(), sha256(file.getBytes()))
				.update();
			return id;
		}

	}

	@Service
	public static class Audit {

		private final JdbcClient jdbc;

		Audit(JdbcClient jdbc) {
			this.jdbc = jdbc;
		}

		@Transactional(propagation = Propagation.REQUIRES_NEW)
		public void record(String key, String what) {
			this.jdbc.sql("INSERT INTO audit (audit_key, what) VALUES (?, ?)").params(key, what).update();
		}

	}

	@RestController
	static class TransferController {

		private final Payments payments;

		TransferController(Payments payments) {
			this.payments = payments;
		}

		@Idempotent
		@PutMapping("/transfers/{ref}")
		ResponseEntity<Map<String, Object>> transfer(@PathVariable String ref,
				@RequestHeader("Idempotency-Key") String key, @RequestParam String to, @RequestParam int amount) {
			String id = this.payments.transfer(key, to, amount);
			return ResponseEntity.created(URI.create("/transfers/" + id))
				.body(Map.of("id", id, "ref", ref, "to", to, "amount", amount));
		}

		@Idempotent
		@PostMapping("/statements")
		ResponseEntity<Map<String, Object>> upload(@RequestHeader("Idempotency-Key") String key,
				@RequestPart("file") MultipartFile file) throws IOException {
			String id = this.payments.statement(key, file);
			return ResponseEntity.status(HttpStatus.CREATED)
				.body(Map.of("id", id, "name", file.getOriginalFilename(), "size", file.getSize()));
		}

		@Idempotent
		@PostMapping("/transfers/audited")
		Map<String, Object> audited(@RequestHeader("Idempotency-Key") String key, @RequestParam String to,
				@RequestParam int amount) {
			return Map.of("id", this.payments.audited(key, to, amount));
		}

		/** Writes the transfer, then says the caller is over its rate. */
		@Idempotent
		@PostMapping("/transfers/limited")
		ResponseEntity<String> limited(@RequestHeader("Idempotency-Key") String key, @RequestParam String to,
				@RequestParam int amount) {
			this.payments.transfer(key, to, amount);
			return ResponseEntity.status(HttpStatus.TOO_MANY_REQUESTS).header("Retry-After", "1").body("slow down");
		}

		@Idempotent
		@PostMapping("/logins")
		Map<String, Object> login(@RequestHeader("Idempotency-Key") String key, @RequestParam String to,
				HttpServletResponse response) {
			response.addCookie(new Cookie("session", UUID.randomUUID().toString()));
			return Map.of("id", this.payments.transfer(key, to, 0));
		}

		/** Remembers the payee in the HTTP session. */
		@Idempotent
		@PostMapping("/payees")
		Map<String, Object> payee(@RequestHeader("Idempotency-Key") String key, @RequestParam String to,
				HttpServletRequest request) {
			request.getSession(true).setAttribute("payee", to);
			return Map.of("id", this.payments.transfer(key, to, 0));
		}

		/**
		 * Records the transfer, then refuses amounts above 1000 the way Spring users do.
		 */
		@Idempotent
		@PostMapping("/transfers/checked")
		Map<String, Object> checked(@RequestHeader("Idempotency-Key") String key, @RequestParam String to,
				@RequestParam int amount) {
			String id = this.payments.transfer(key, to, amount);
			if (amount > 1000) {
				throw new ResponseStatusException(HttpStatus.UNPROCESSABLE_CONTENT, "amount over the limit: " + id);
			}
			return Map.of("id", id);
		}

	}

	static String sha256(byte[] bytes) {
		try {
			return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException(ex);
		}
	}

}
