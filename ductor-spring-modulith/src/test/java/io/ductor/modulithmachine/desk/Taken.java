package io.ductor.modulithmachine.desk;

/**
 * An order was taken.
 *
 * @param id the order id
 */
public record Taken(String id) {
}
