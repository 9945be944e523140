package io.ductor.modulithapp.order;

/**
 * An order was shipped: two module listeners and a plain listener take it.
 *
 * @param id the order id
 */
public record OrderShipped(String id) {
}
