package io.ductor.reliability.booking;

/**
 * A booking as the client sees it.
 *
 * @param id the booking's id
 * @param guest who booked
 * @param room which room
 * @param nights how many nights
 * @param madeBy the instance (and its start) that made the booking
 */
public record Booking(String id, String guest, String room, int nights, String madeBy) {
}
