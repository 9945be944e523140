package io.ductor.idempotency.web.internal;

import java.io.IOException;
import java.util.concurrent.atomic.AtomicBoolean;

import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.http.HttpServletRequest;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import io.ductor.idempotency.IdempotencyService;
import io.ductor.idempotency.ReleaseReason;
import io.ductor.idempotency.Reservation;
import io.ductor.idempotency.ReservationLostException;

/**
 * A two-phase decision in progress: the committed reservation and the handler's held
 * answer, settled (stored or released, then sent) once the answer is complete. That is
 * when the handler returns, or, when Spring MVC answers asynchronously, at the end of the
 * dispatch after which no asynchronous processing goes on: never while it still runs.
 * Should the asynchronous processing end without that dispatch (the container gave up on
 * the request), the reservation is released when the request completes.
 */
final class TwoPhaseExchange implements AsyncListener {

	private static final Log logger = LogFactory.getLog(IdempotencyFilter.class);

	private final IdempotencyService service;

	private final Reservation reservation;

	private final ResponseCapture captured;

	private final int maxResponseSize;

	/** The exceptions the request held before the handler's dispatch. */
	private final Object[] exceptionsBefore;

	private final AtomicBoolean settled = new AtomicBoolean();

	private boolean listening;

	TwoPhaseExchange(IdempotencyService service, Reservation reservation, ResponseCapture captured, int maxResponseSize,
			Object[] exceptionsBefore) {
		this.service = service;
		this.reservation = reservation;
		this.captured = captured;
		this.maxResponseSize = maxResponseSize;
		this.exceptionsBefore = exceptionsBefore;
	}

	ResponseCapture captured() {
		return this.captured;
	}

	/**
	 * A dispatch of the request returned: settles the decision unless asynchronous
	 * processing goes on, whose last dispatch settles it.
	 */
	void dispatched(HttpServletRequest request) throws IOException {
		if (request.isAsyncStarted()) {
			if (!this.listening) {
				this.listening = true;
				request.getAsyncContext().addListener(this);
			}
			return;
		}
		settle(HandlerExceptions.thrownSince(request, this.exceptionsBefore));
	}

	/** A dispatch of the request threw: the key is released. */
	void failed() {
		if (this.settled.compareAndSet(false, true)) {
			release(ReleaseReason.HANDLER_FAILED);
		}
	}

	/**
	 * @param threw whether the handler (or its asynchronous part) threw an exception that
	 * Spring MVC answered
	 */
	private void settle(boolean threw) throws IOException {
		if (!this.settled.compareAndSet(false, true)) {
			return;
		}
		try {
			if (this.captured.overflowed()) {
				logger.warn("The response for idempotency key '" + this.reservation.request().key() + "' was larger"
						+ " than ductor.idempotency.max-response-size (" + this.maxResponseSize + " bytes): it was"
						+ " sent but not stored, and the key was released, so a retry runs the handler again");
				release(ReleaseReason.TOO_LARGE);
			}
			else if (this.captured.getStatus() >= 500) {
				release(ReleaseReason.SERVER_ERROR);
			}
			else if (this.captured.refusal() || this.captured.setsCookie() || this.captured.errorSent()) {
				logger.warn("The response for idempotency key '" + this.reservation.request().key() + "' is a "
						+ this.captured.getStatus() + (this.captured.setsCookie() ? " carrying Set-Cookie" : "")
						+ (this.captured.errorSent() ? " sent as an error page (sendError)" : "")
						+ ", which is never stored for replay: it was sent, and the key was released");
				release(ReleaseReason.NOT_STORABLE);
			}
			else if (threw) {
				// an exception's answer, whatever its status: the work did not complete
				release(ReleaseReason.HANDLER_FAILED);
			}
			else {
				this.service.complete(this.reservation, this.reservation.ownerToken().toString(),
						StoredResponses.stored(this.captured));
			}
		}
		catch (ReservationLostException ex) {
			logger.warn(ex.getMessage());
		}
		finally {
			this.captured.send();
		}
	}

	private void release(ReleaseReason reason) {
		try {
			this.service.fail(this.reservation, reason);
		}
		catch (RuntimeException ex) {
			logger.warn("Could not release idempotency key '" + this.reservation.request().key()
					+ "'; the sweeper releases it after ductor.idempotency.pending-ttl", ex);
		}
	}

	@Override
	public void onComplete(AsyncEvent event) {
		if (this.settled.compareAndSet(false, true)) {
			logger.warn("The asynchronous answer for idempotency key '" + this.reservation.request().key()
					+ "' ended without being dispatched (" + event.getThrowable()
					+ "): nothing was stored, and the key was released");
			release(ReleaseReason.HANDLER_FAILED);
		}
	}

	@Override
	public void onStartAsync(AsyncEvent event) {
		// a new asynchronous cycle of the same answer: keep listening
		event.getAsyncContext().addListener(this);
	}

	@Override
	public void onTimeout(AsyncEvent event) {
		// Spring MVC answers the timeout in a dispatch of its own
	}

	@Override
	public void onError(AsyncEvent event) {
		// Spring MVC answers the error in a dispatch of its own
	}

}
