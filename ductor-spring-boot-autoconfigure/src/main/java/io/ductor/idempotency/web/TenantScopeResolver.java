package io.ductor.idempotency.web;

import java.security.Principal;

import jakarta.servlet.http.HttpServletRequest;

/**
 * Decides whose idempotency key a request carries: keys of different tenant scopes never
 * meet, so one tenant can never be answered with another's stored response. Define a bean
 * of this type to replace the default, {@link #principal()}.
 */
@FunctionalInterface
public interface TenantScopeResolver {

	/**
	 * @param request the request
	 * @return its tenant scope: at most 200 characters without control characters, empty
	 * for none
	 */
	String tenantScope(HttpServletRequest request);

	/**
	 * @return a resolver that scopes keys by the authenticated user's name, and puts
	 * unauthenticated requests in the empty scope
	 */
	static TenantScopeResolver principal() {
		return (request) -> {
			Principal principal = request.getUserPrincipal();
			return (principal != null) ? principal.getName() : "";
		};
	}

}
