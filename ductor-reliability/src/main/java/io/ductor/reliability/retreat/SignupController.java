package io.ductor.reliability.retreat;

import java.util.Map;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code POST /signups?first=&count=}: signs guests up; {@code GET /ready} for the
 * launcher.
 */
@RestController
class SignupController {

	private final Signups signups;

	SignupController(Signups signups) {
		this.signups = signups;
	}

	@PostMapping("/signups")
	Map<String, Integer> signUp(@RequestParam int first, @RequestParam int count) {
		return Map.of("created", this.signups.signUp(first, count));
	}

	@GetMapping("/ready")
	String ready() {
		return "ready";
	}

}
