package io.ductor.idempotency.web.internal;

import jakarta.servlet.http.HttpServletRequest;

/**
 * A request read for its fingerprint.
 *
 * @param request the request to hand to the handler: its body, parameters and parts are
 * still readable
 * @param fingerprint the request's fingerprint
 */
public record FingerprintedRequest(HttpServletRequest request, String fingerprint) {
}
