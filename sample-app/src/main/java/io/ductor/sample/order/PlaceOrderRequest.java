package io.ductor.sample.order;

/**
 * The body of {@code POST /orders}.
 *
 * @param customer who orders, 1 to 100 characters
 * @param sku the product
 * @param quantity how many, 1 to 100
 */
public record PlaceOrderRequest(String customer, String sku, Integer quantity) {
}
