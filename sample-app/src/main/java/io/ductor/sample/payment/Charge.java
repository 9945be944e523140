package io.ductor.sample.payment;

/**
 * A charge as the payment gateway answers it.
 *
 * @param id the gateway's charge id
 * @param idempotencyKey the key the charge was requested with
 * @param orderId the order it pays
 * @param amountCents the amount charged, in cents
 * @param replayed whether the gateway had applied this key before and answered the saved
 * charge
 */
public record Charge(String id, String idempotencyKey, String orderId, long amountCents, boolean replayed) {
}
