package io.ductor.reliability.modulith;

/**
 * An order was placed.
 *
 * @param seq the order's number
 */
public record OrderPlaced(long seq) {
}
