package io.ductor.sample.effect;

import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ResponseStatusException;

import io.ductor.effect.EffectIntentStateException;
import io.ductor.effect.EffectOperations;
import io.ductor.effect.EffectResolution;

/**
 * The operator's side of the sample, through {@link EffectOperations}: look at an effect,
 * decide on one waiting in {@code needs_decision}, run a failed one again.
 */
@RestController
@RequestMapping("/effects")
class EffectController {

	private final EffectOperations operations;

	EffectController(EffectOperations operations) {
		this.operations = operations;
	}

	@GetMapping("/{id}")
	EffectView get(@PathVariable long id) {
		return EffectView.of(this.operations.find(id).orElseThrow(() -> notFound(id)));
	}

	/**
	 * Decide on an effect in {@code needs_decision}: {@code RETRY} (the receiver did not
	 * apply it: run again with the same key), {@code MARK_DONE} (it did) or
	 * {@code MARK_FAILED}.
	 */
	@PostMapping("/{id}/resolution")
	EffectView resolve(@PathVariable long id, @RequestBody Resolution body) {
		if (body.resolution() == null) {
			throw new ResponseStatusException(HttpStatus.BAD_REQUEST,
					"resolution must be RETRY, MARK_DONE or MARK_FAILED");
		}
		this.operations.find(id).orElseThrow(() -> notFound(id));
		return EffectView.of(this.operations.resolve(id, body.resolution()));
	}

	/**
	 * Run a {@code failed} (or undecided) effect again, with the same key and a fresh
	 * budget.
	 */
	@PostMapping("/{id}/retry")
	EffectView retry(@PathVariable long id) {
		this.operations.find(id).orElseThrow(() -> notFound(id));
		return EffectView.of(this.operations.retry(id));
	}

	@ExceptionHandler(EffectIntentStateException.class)
	ProblemDetail conflict(EffectIntentStateException ex) {
		return ProblemDetail.forStatusAndDetail(HttpStatus.CONFLICT, ex.getMessage());
	}

	private static ResponseStatusException notFound(long id) {
		return new ResponseStatusException(HttpStatus.NOT_FOUND, "No effect with id " + id);
	}

	/**
	 * @param resolution the decision
	 */
	record Resolution(EffectResolution resolution) {
	}

}
