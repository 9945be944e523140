package io.ductor.run.answer;

/**
 * An order's state.
 *
 * @param stage how far it got
 * @param chargeId the gateway's charge, once paid
 */
public record OrderState(String stage, String chargeId) {
}
