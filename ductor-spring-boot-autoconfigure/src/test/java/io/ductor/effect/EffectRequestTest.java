package io.ductor.effect;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class EffectRequestTest {

	@Test
	void nullArgumentsAreAllowedAsDocumented() {
		EffectRequest request = EffectRequest.of("mail.send", "topic", null, 3).withOrderingKey("k");
		assertThat(request.args()).containsExactly("topic", null, 3);
		assertThat(request.orderingKey()).isEqualTo("k");
	}

	@Test
	void theArgumentsAreACopyThatCannotBeChanged() {
		List<Object> args = new ArrayList<>(List.of("a"));
		EffectRequest request = new EffectRequest("mail.send", args, null, null, null);
		args.add("b");
		assertThat(request.args()).containsExactly("a");
		assertThatExceptionOfType(UnsupportedOperationException.class).isThrownBy(() -> request.args().add("c"));
	}

	@Test
	void aNegativeDelayIsRefused() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> EffectRequest.of("mail.send").withDelay(Duration.ofSeconds(-1)));
	}

}
