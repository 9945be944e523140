package io.ductor.sample;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.junit.jupiter.api.Assumptions;

/**
 * Debian's headless Chromium, driven through the DevTools protocol over the JDK's own WebSocket
 * client: no driver, no browser download. {@link #locate()} installs the {@code chromium} package
 * with apt-get when it is missing and the tests may (they run as root in CI), and otherwise skips
 * the test with a message saying why.
 */
final class HeadlessChromium implements AutoCloseable {

	static final Path BINARY = Path.of("/usr/bin/chromium");

	private static final JsonMapper JSON = JsonMapper.builder().build();

	private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(30);

	private final Process process;

	private final Path profile;

	private final WebSocket socket;

	private final AtomicLong ids = new AtomicLong();

	private final Map<Long, CompletableFuture<JsonNode>> pending = new ConcurrentHashMap<>();

	private HeadlessChromium(Process process, Path profile, URI page) {
		this.process = process;
		this.profile = profile;
		this.socket = HttpClient.newHttpClient()
			.newWebSocketBuilder()
			.connectTimeout(Duration.ofSeconds(10))
			.buildAsync(page, new Listener())
			.join();
	}

	/**
	 * The Chromium binary, installed first when missing; skips the calling test (a JUnit
	 * assumption) when it cannot be installed.
	 * @return the binary
	 */
	static Path locate() {
		if (!Files.isExecutable(BINARY)) {
			String problem = install();
			Assumptions.assumeTrue(Files.isExecutable(BINARY),
					() -> "Skipping the browser test: " + BINARY + " is missing and could not be installed (" + problem
							+ "). Install Debian's 'chromium' package (apt-get install -y chromium) to run it.");
		}
		return BINARY;
	}

	private static String install() {
		if (!Files.isExecutable(Path.of("/usr/bin/apt-get"))) {
			return "no apt-get on this machine";
		}
		if (!"root".equals(System.getProperty("user.name"))) {
			return "installing packages needs root, the tests run as " + System.getProperty("user.name");
		}
		String first = run("apt-get", "-o", "DPkg::Lock::Timeout=600", "install", "-y", "chromium");
		if (first == null) {
			return null;
		}
		String update = run("apt-get", "-o", "DPkg::Lock::Timeout=600", "update");
		String second = run("apt-get", "-o", "DPkg::Lock::Timeout=600", "install", "-y", "chromium");
		return (second == null) ? null : "apt-get install failed: " + second + ((update != null) ? "; " + update : "");
	}

	/** @return {@code null} on success, else what went wrong */
	private static String run(String... command) {
		try {
			System.out.println("Browser test setup: " + String.join(" ", command));
			ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true)
				.redirectOutput(ProcessBuilder.Redirect.appendTo(Path.of("target", "chromium-install.log").toFile()));
			builder.environment().put("DEBIAN_FRONTEND", "noninteractive");
			Process process = builder.start();
			if (!process.waitFor(15, TimeUnit.MINUTES)) {
				process.destroyForcibly();
				return String.join(" ", command) + " timed out";
			}
			return (process.exitValue() == 0) ? null
					: String.join(" ", command) + " exited with " + process.exitValue() + " (see target/chromium-install.log)";
		}
		catch (IOException ex) {
			return ex.getMessage();
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return "interrupted";
		}
	}

	/**
	 * Start a headless Chromium on a blank page.
	 * @param binary the binary
	 * @param width the window width
	 * @param height the window height
	 * @return the browser, connected to its page
	 */
	static HeadlessChromium launch(Path binary, int width, int height) throws IOException, InterruptedException {
		Path profile = Files.createTempDirectory("ductor-chromium");
		List<String> command = new ArrayList<>(List.of(binary.toString(), "--headless", "--no-sandbox", "--disable-gpu",
				"--disable-dev-shm-usage", "--disable-quic", "--no-first-run", "--no-default-browser-check",
				"--disable-background-networking", "--disable-component-update", "--disable-sync",
				"--disable-extensions", "--hide-scrollbars", "--remote-debugging-port=0", "--remote-allow-origins=*",
				"--user-data-dir=" + profile, "--window-size=" + width + "," + height, "about:blank"));
		Process process = new ProcessBuilder(command).redirectErrorStream(true)
			.redirectOutput(Path.of("target", "chromium.log").toFile())
			.start();
		Path activePort = profile.resolve("DevToolsActivePort");
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
		while (!Files.exists(activePort) || Files.readAllLines(activePort).isEmpty()) {
			if (!process.isAlive() || System.nanoTime() > deadline) {
				process.destroyForcibly();
				throw new IllegalStateException("Chromium did not open its DevTools port (see target/chromium.log)");
			}
			Thread.sleep(100);
		}
		int port = Integer.parseInt(Files.readAllLines(activePort).get(0).strip());
		HttpResponse<String> targets = HttpClient.newHttpClient()
			.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/json/list")).build(),
					HttpResponse.BodyHandlers.ofString());
		for (JsonNode target : JSON.readTree(targets.body())) {
			if ("page".equals(target.path("type").asString())) {
				return new HeadlessChromium(process, profile,
						URI.create(target.get("webSocketDebuggerUrl").asString()));
			}
		}
		process.destroyForcibly();
		throw new IllegalStateException("Chromium has no page target: " + targets.body());
	}

	/** Open a URL and wait until it has loaded. */
	void open(String url) {
		send("Page.enable", Map.of());
		send("Page.navigate", Map.of("url", url));
		long deadline = System.nanoTime() + COMMAND_TIMEOUT.toNanos();
		while (!"complete".equals(evaluate("document.readyState"))) {
			if (System.nanoTime() > deadline) {
				throw new IllegalStateException("Page " + url + " did not load");
			}
			pause(100);
		}
	}

	/**
	 * Evaluate JavaScript in the page, awaiting a promise result.
	 * @param expression the expression
	 * @return its value as a string, number or boolean, or {@code null}
	 */
	Object evaluate(String expression) {
		JsonNode result = send("Runtime.evaluate",
				Map.of("expression", expression, "returnByValue", true, "awaitPromise", true));
		if (result.has("exceptionDetails")) {
			throw new IllegalStateException("JavaScript failed: " + result.get("exceptionDetails"));
		}
		JsonNode value = result.path("result").path("value");
		if (value.isMissingNode() || value.isNull()) {
			return null;
		}
		return value.isString() ? value.asString() : value.isBoolean() ? (Object) value.asBoolean() : value.toString();
	}

	/** Click the element the CSS selector finds, failing when there is none. */
	void click(String selector) {
		Object clicked = evaluate("(() => { const e = document.querySelector(" + JSON.writeValueAsString(selector)
				+ "); if (!e) return false; e.click(); return true; })()");
		if (!Boolean.TRUE.equals(clicked)) {
			throw new IllegalStateException("Nothing to click at " + selector);
		}
	}

	/** Set an input's value. */
	void fill(String selector, String value) {
		evaluate("document.querySelector(" + JSON.writeValueAsString(selector) + ").value = "
				+ JSON.writeValueAsString(value));
	}

	/** Save a PNG of the page as it is now. */
	void screenshot(Path file) throws IOException {
		JsonNode shot = send("Page.captureScreenshot", Map.of("format", "png", "captureBeyondViewport", true));
		Files.createDirectories(file.toAbsolutePath().getParent());
		Files.write(file, Base64.getDecoder().decode(shot.get("data").asString()));
	}

	private JsonNode send(String method, Map<String, Object> params) {
		long id = this.ids.incrementAndGet();
		CompletableFuture<JsonNode> answer = new CompletableFuture<>();
		this.pending.put(id, answer);
		this.socket.sendText(JSON.writeValueAsString(Map.of("id", id, "method", method, "params", params)), true).join();
		try {
			JsonNode message = answer.get(COMMAND_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
			if (message.has("error")) {
				throw new IllegalStateException(method + " failed: " + message.get("error"));
			}
			return message.path("result");
		}
		catch (Exception ex) {
			throw new IllegalStateException(method + " got no answer: " + ex.getMessage(), ex);
		}
		finally {
			this.pending.remove(id);
		}
	}

	private static void pause(long millis) {
		try {
			Thread.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	@Override
	public void close() throws IOException {
		this.socket.abort();
		this.process.destroy();
		try {
			if (!this.process.waitFor(10, TimeUnit.SECONDS)) {
				this.process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		try (var files = Files.walk(this.profile)) {
			files.sorted(java.util.Comparator.reverseOrder()).forEach((path) -> path.toFile().delete());
		}
	}

	/** Collects text frames into messages and completes the command each one answers. */
	private final class Listener implements WebSocket.Listener {

		private final StringBuilder buffer = new StringBuilder();

		@Override
		public CompletionStage<?> onText(WebSocket webSocket, CharSequence data, boolean last) {
			this.buffer.append(data);
			if (last) {
				JsonNode message = JSON.readTree(this.buffer.toString());
				this.buffer.setLength(0);
				if (message.has("id")) {
					CompletableFuture<JsonNode> answer = HeadlessChromium.this.pending.get(message.get("id").asLong());
					if (answer != null) {
						answer.complete(message);
					}
				}
			}
			webSocket.request(1);
			return null;
		}

	}

}
