package io.ductor.idempotency.web.internal;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

import jakarta.servlet.RequestDispatcher;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.Part;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.InvalidMediaTypeException;
import org.springframework.http.MediaType;
import org.springframework.util.unit.DataSize;

import io.ductor.idempotency.Fingerprints;

/**
 * Reads an {@code @Idempotent} request once for its fingerprint, within
 * {@code ductor.idempotency.max-request-size}, and hands back a request the handler can
 * still read. The fingerprint is SHA-256 over the method ({@code HEAD} counts as
 * {@code GET}, which answers it), the path with its query string as the client sent it
 * (before any forward), the body and the conditional and range headers the request
 * carries ({@value #CONDITIONS_DOC}), every element a length-prefixed part of its own so
 * that no two different requests share one:
 * <ul>
 * <li>a raw body (JSON, text, anything else): its bytes, buffered for the handler;</li>
 * <li>a form ({@code application/x-www-form-urlencoded}, any method): the parameters as
 * the container or Spring's {@code FormContentFilter} parsed them, sorted by name, then
 * any body bytes still unread (where no filter parsed the form), buffered for the
 * handler;</li>
 * <li>{@code multipart/*} (as Spring's multipart resolver reads it): the parts as the
 * container parsed them, sorted by name, each with its submitted file name, content type
 * and bytes. The raw stream is left to the container, so the handler receives its parts.
 * Where the container has no multipart support
 * ({@code spring.servlet.multipart.enabled=false}), the raw bytes.</li>
 * </ul>
 * A request is too large when its {@code Content-Length} exceeds the limit, or, when it
 * declares none, when its body bytes, the sum of its parts' sizes or its parameters'
 * bytes do. At most the limit plus one byte is read into memory.
 */
public final class RequestFingerprinter {

	static final String CONDITIONS_DOC = "If-Match, If-None-Match, If-Modified-Since, If-Unmodified-Since, If-Range,"
			+ " Range";

	/**
	 * Headers that change what a handler answers to the same method, path and body (a
	 * 304, 206 or 412): a request carrying other ones is another request.
	 */
	private static final List<String> CONDITIONS = List.of(HttpHeaders.IF_MATCH, HttpHeaders.IF_NONE_MATCH,
			HttpHeaders.IF_MODIFIED_SINCE, HttpHeaders.IF_UNMODIFIED_SINCE, HttpHeaders.IF_RANGE, HttpHeaders.RANGE);

	private static final String NONE = "-";

	private static final String GIVEN = "=";

	private final long maxBytes;

	/**
	 * @param maxRequestSize the largest request accepted
	 */
	RequestFingerprinter(DataSize maxRequestSize) {
		this.maxBytes = maxRequestSize.toBytes();
	}

	/**
	 * @param request the request, its body unread
	 * @return the request to hand on and its fingerprint
	 * @throws RejectedRequestException when the request is too large (413) or its
	 * multipart body cannot be read (400)
	 * @throws IOException when reading the body fails
	 */
	FingerprintedRequest read(HttpServletRequest request) throws RejectedRequestException, IOException {
		String method = "HEAD".equals(request.getMethod()) ? "GET" : request.getMethod();
		String target = target(request);
		List<String> conditions = conditions(request);
		long declared = request.getContentLengthLong();
		if (declared > this.maxBytes) {
			throw tooLarge("declares a body of " + declared + " bytes");
		}
		MediaType contentType = contentType(request);
		if (contentType != null && "multipart".equalsIgnoreCase(contentType.getType())) {
			Collection<Part> parts = parts(request);
			if (parts != null) {
				return new FingerprintedRequest(request, multipart(method, target, parts, conditions));
			}
		}
		if (contentType != null && MediaType.APPLICATION_FORM_URLENCODED.includes(contentType)) {
			return form(request, method, target, conditions);
		}
		byte[] body = readAtMost(request.getInputStream(), this.maxBytes);
		Fingerprints.Builder fingerprint = Fingerprints.builder().part(method).part(target).part(body);
		conditions.forEach(fingerprint::part);
		return new FingerprintedRequest(new BufferedBodyRequest(request, body), fingerprint.sha256());
	}

	/**
	 * The fingerprint of a request with a raw body and no conditional headers; unchanged
	 * since the first release, so stored decisions stay valid.
	 * @param method the request method
	 * @param target the path with its query string
	 * @param body the raw body
	 * @return the request's fingerprint
	 */
	public static String fingerprint(String method, String target, byte[] body) {
		return Fingerprints.sha256(method.getBytes(StandardCharsets.UTF_8), target.getBytes(StandardCharsets.UTF_8),
				body);
	}

	/**
	 * The path and query the client sent: a forwarded request's original ones.
	 */
	private static String target(HttpServletRequest request) {
		String uri = (String) request.getAttribute(RequestDispatcher.FORWARD_REQUEST_URI);
		String query = (uri != null) ? (String) request.getAttribute(RequestDispatcher.FORWARD_QUERY_STRING)
				: request.getQueryString();
		return ((uri != null) ? uri : request.getRequestURI()) + ((query != null) ? "?" + query : "");
	}

	/**
	 * The request's conditional and range headers, as name and values: empty for most
	 * requests, whose fingerprints stay what they were.
	 */
	private static List<String> conditions(HttpServletRequest request) {
		List<String> conditions = new ArrayList<>();
		for (String name : CONDITIONS) {
			List<String> values = Collections.list(request.getHeaders(name));
			if (!values.isEmpty()) {
				conditions.add(name.toLowerCase(Locale.ROOT));
				conditions.add(String.join("\n", values));
			}
		}
		return conditions;
	}

	/**
	 * The parameters first: reading them makes the container parse a POST form, and
	 * {@code FormContentFilter} has parsed the form of a PUT, PATCH or DELETE already.
	 * Whatever is left in the stream was parsed by no one (a PUT with that filter turned
	 * off) and is part of the request too.
	 */
	private FingerprintedRequest form(HttpServletRequest request, String method, String target, List<String> conditions)
			throws RejectedRequestException, IOException {
		Map<String, String[]> parameters;
		try {
			parameters = new TreeMap<>(request.getParameterMap());
		}
		catch (IllegalStateException ex) {
			// Tomcat refuses a form beyond its own limits
			// (server.tomcat.max-http-form-post-size) this way
			throw unreadable("form", ex);
		}
		List<String> parts = new ArrayList<>(List.of(method, target));
		long size = 0;
		for (Map.Entry<String, String[]> parameter : parameters.entrySet()) {
			String name = parameter.getKey();
			String[] values = parameter.getValue();
			// every name and value a part of its own, so no two different forms share a
			// fingerprint
			parts.add(name);
			parts.add(Integer.toString(values.length));
			for (String value : values) {
				parts.add(value);
				size += utf8Length(name) + utf8Length(value);
			}
		}
		if (size > this.maxBytes) {
			throw tooLarge("has " + size + " bytes of form parameters");
		}
		byte[] unread = readAtMost(request.getInputStream(), this.maxBytes - size);
		Fingerprints.Builder fingerprint = Fingerprints.builder();
		parts.forEach(fingerprint::part);
		if (unread.length > 0) {
			// only when present, so that the fingerprints of parsed forms stay what they
			// were
			fingerprint.part(unread);
		}
		conditions.forEach(fingerprint::part);
		return new FingerprintedRequest(new BufferedBodyRequest(request, unread), fingerprint.sha256());
	}

	private String multipart(String method, String target, Collection<Part> parts, List<String> conditions)
			throws RejectedRequestException, IOException {
		long size = 0;
		for (Part part : parts) {
			size += part.getSize();
		}
		if (size > this.maxBytes) {
			throw tooLarge("has " + size + " bytes in its parts");
		}
		List<Part> sorted = new ArrayList<>(parts);
		// stable: parts of one name keep their order
		sorted.sort(Comparator.comparing(Part::getName, Comparator.nullsFirst(Comparator.naturalOrder())));
		Fingerprints.Builder fingerprint = Fingerprints.builder().part(method).part(target).part("multipart");
		for (Part part : sorted) {
			fingerprint.part(optional(part.getName()))
				.part(optional(part.getSubmittedFileName()))
				.part(optional(part.getContentType()));
			try (InputStream bytes = part.getInputStream()) {
				fingerprint.part(bytes, part.getSize());
			}
		}
		conditions.forEach(fingerprint::part);
		return fingerprint.sha256();
	}

	/**
	 * The parts as the container parsed them (it keeps them for the handler), or
	 * {@code null} when the container has no multipart configuration for this servlet
	 * ({@code spring.servlet.multipart.enabled=false}): it then leaves the stream alone
	 * and the body is fingerprinted as raw bytes.
	 */
	private static Collection<Part> parts(HttpServletRequest request) throws RejectedRequestException {
		try {
			return request.getParts();
		}
		catch (IllegalStateException ex) {
			if (ex.getCause() == null && !isSizeLimit(ex)) {
				return null;
			}
			throw unreadable("multipart", ex);
		}
		catch (IOException | ServletException ex) {
			throw unreadable("multipart", ex);
		}
	}

	/**
	 * The container could not parse the body: beyond one of its own limits
	 * ({@code spring.servlet.multipart.*}, {@code server.tomcat.max-http-form-post-size})
	 * it is 413, otherwise 400. Answered here, before anything is reserved, rather than
	 * left to the dispatcher, which under {@code spring.servlet.multipart.resolve-lazily}
	 * might still run the handler.
	 */
	private static RejectedRequestException unreadable(String kind, Exception ex) {
		if (isSizeLimit(ex)) {
			return new RejectedRequestException(HttpStatus.CONTENT_TOO_LARGE,
					"The " + kind + " body of this request exceeds the server's limits: " + rootMessage(ex), ex);
		}
		return new RejectedRequestException(HttpStatus.BAD_REQUEST,
				"The " + kind + " body of this request could not be read: " + rootMessage(ex), ex);
	}

	/**
	 * Tomcat's {@code SizeException}s and size messages ("exceeded", "too big"), Jetty's
	 * "exceeds max...": containers tell a size limit by no common type, so this reads
	 * them the way Spring's {@code StandardMultipartHttpServletRequest} does.
	 */
	private static boolean isSizeLimit(Throwable ex) {
		for (Throwable cause = ex; cause != null; cause = cause.getCause()) {
			String name = cause.getClass().getSimpleName();
			String message = (cause.getMessage() != null) ? cause.getMessage().toLowerCase(Locale.ROOT) : "";
			if (name.contains("LimitExceeded") || name.equals("SizeException") || message.contains("exceed")
					|| message.contains("too big") || message.contains("too large")) {
				return true;
			}
		}
		return false;
	}

	private static String rootMessage(Throwable ex) {
		Throwable root = ex;
		while (root.getCause() != null) {
			root = root.getCause();
		}
		return (root.getMessage() != null) ? root.getMessage() : root.getClass().getSimpleName();
	}

	/** Reads at most {@code max + 1} bytes: one more tells that there were too many. */
	private byte[] readAtMost(InputStream stream, long max) throws RejectedRequestException, IOException {
		byte[] body = stream.readNBytes((int) Math.min(max + 1, Integer.MAX_VALUE - 8));
		if (body.length > max) {
			throw tooLarge("has a body of more than " + this.maxBytes + " bytes");
		}
		return body;
	}

	private RejectedRequestException tooLarge(String what) {
		return new RejectedRequestException(HttpStatus.CONTENT_TOO_LARGE,
				"This request " + what + "; an @Idempotent endpoint accepts at most " + this.maxBytes
						+ " bytes (ductor.idempotency.max-request-size)",
				null);
	}

	private static MediaType contentType(HttpServletRequest request) {
		try {
			return (request.getContentType() != null) ? MediaType.parseMediaType(request.getContentType()) : null;
		}
		catch (InvalidMediaTypeException ex) {
			// fingerprinted as raw bytes; the dispatcher answers the bad content type
			// itself
			return null;
		}
	}

	private static String optional(String value) {
		return (value != null) ? GIVEN + value : NONE;
	}

	private static long utf8Length(String text) {
		return text.getBytes(StandardCharsets.UTF_8).length;
	}

}
