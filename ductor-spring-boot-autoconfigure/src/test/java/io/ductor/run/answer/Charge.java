package io.ductor.run.answer;

/**
 * A charge of the payment gateway.
 *
 * @param id the charge's id
 */
public record Charge(String id) {
}
