package io.ductor.idempotency;

import java.util.UUID;

/**
 * A pending reservation: the right, and the duty, to decide the request and then
 * {@link IdempotencyService#complete complete} or {@link IdempotencyService#fail fail}
 * it.
 *
 * @param request the reserved request
 * @param ownerToken the fencing token: only its holder can settle the reservation
 */
public record Reservation(IdempotentRequest request, UUID ownerToken) {
}
