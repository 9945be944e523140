package io.ductor.testing.devshop;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.stereotype.Component;

import io.ductor.effect.DurableEffect;

/**
 * An application as a user writes it, with a main class of its own and an effect, for
 * {@link io.ductor.testing.DuctorDevDatabase}.
 */
@SpringBootApplication
public class ShopApplication {

	public static void main(String[] args) {
		SpringApplication.run(ShopApplication.class, args);
	}

	/** Sends receipts. */
	@Component
	public static class Receipts {

		@DurableEffect(name = "receipt.send")
		public void send(String orderId) {
		}

	}

}
