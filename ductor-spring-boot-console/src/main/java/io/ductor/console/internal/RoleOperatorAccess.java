package io.ductor.console.internal;

import org.springframework.boot.actuate.endpoint.SecurityContext;

import io.ductor.actuate.OperatorAccess;

/**
 * Lets callers in one role change intents (Spring Security's {@code ROLE_} prefix is
 * implied).
 */
public class RoleOperatorAccess implements OperatorAccess {

	private final String role;

	public RoleOperatorAccess(String role) {
		this.role = role;
	}

	@Override
	public boolean mayWrite(SecurityContext caller) {
		return caller.getPrincipal() != null && caller.isUserInRole(this.role);
	}

}
