package io.ductor.console;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;

import org.springframework.core.io.ClassPathResource;
import org.springframework.http.CacheControl;
import org.springframework.http.MediaType;
import org.springframework.util.ClassUtils;
import org.springframework.util.StreamUtils;
import org.springframework.web.servlet.function.ServerRequest;
import org.springframework.web.servlet.function.ServerResponse;

/**
 * The console's one HTML page, with where the {@code ductor} endpoint is, where the
 * assets are, what stands between the page and the endpoint (a message naming the
 * property to set), and, when Spring Security protects the request, its CSRF token, which
 * the page sends with every write.
 */
class ConsolePage {

	private static final boolean SECURITY_PRESENT = ClassUtils
		.isPresent("org.springframework.security.web.csrf.CsrfToken", ConsolePage.class.getClassLoader());

	private final String template;

	private final String consolePath;

	private final String endpointPath;

	private final Supplier<EndpointReach.@Nullable Finding> reach;

	ConsolePage(String consolePath, String endpointPath, Supplier<EndpointReach.@Nullable Finding> reach) {
		this.consolePath = consolePath;
		this.endpointPath = endpointPath;
		this.reach = reach;
		try {
			this.template = StreamUtils.copyToString(
					new ClassPathResource("io/ductor/console/static/index.html").getInputStream(),
					StandardCharsets.UTF_8);
		}
		catch (IOException ex) {
			throw new UncheckedIOException("The console's page is missing from the jar", ex);
		}
	}

	ServerResponse render(ServerRequest request) {
		String contextPath = request.servletRequest().getContextPath();
		String[] csrf = SECURITY_PRESENT ? SecurityCsrf.token(request) : null;
		EndpointReach.Finding finding = this.reach.get();
		String html = this.template.replace("{{assets}}", attribute(contextPath + this.consolePath + "/assets"))
			.replace("{{endpoint}}", attribute(contextPath + this.endpointPath))
			.replace("{{console}}", attribute(contextPath + this.consolePath))
			.replace("{{csrfHeader}}", attribute((csrf != null) ? csrf[0] : ""))
			.replace("{{csrfToken}}", attribute((csrf != null) ? csrf[1] : ""))
			.replace("{{endpointProblem}}", attribute((finding != null && finding.blocking()) ? finding.message() : ""))
			.replace("{{endpointNotice}}",
					attribute((finding != null && !finding.blocking()) ? finding.message() : ""));
		return ServerResponse.ok()
			.contentType(new MediaType(MediaType.TEXT_HTML, StandardCharsets.UTF_8))
			.cacheControl(CacheControl.noStore())
			.header("X-Frame-Options", "DENY")
			.header("Content-Security-Policy",
					"default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; frame-ancestors 'none'")
			.body(html);
	}

	private static String attribute(String value) {
		return value.replace("&", "&amp;").replace("\"", "&quot;").replace("<", "&lt;").replace(">", "&gt;");
	}

	/**
	 * Reads Spring Security's token; only loaded when Spring Security is on the class
	 * path.
	 */
	private static final class SecurityCsrf {

		static String[] token(ServerRequest request) {
			Object token = request.servletRequest()
				.getAttribute(org.springframework.security.web.csrf.CsrfToken.class.getName());
			if (token instanceof org.springframework.security.web.csrf.CsrfToken csrf) {
				return new String[] { csrf.getHeaderName(), csrf.getToken() };
			}
			return null;
		}

	}

}
