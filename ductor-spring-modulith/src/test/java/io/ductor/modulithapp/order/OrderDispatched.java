package io.ductor.modulithapp.order;

/**
 * An order was dispatched: two beans of one listener class take it.
 *
 * @param id the order id
 */
public record OrderDispatched(String id) {
}
