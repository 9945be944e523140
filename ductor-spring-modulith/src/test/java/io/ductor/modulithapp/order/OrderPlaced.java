package io.ductor.modulithapp.order;

/**
 * An order was placed.
 *
 * @param id the order id
 */
public record OrderPlaced(String id) {
}
