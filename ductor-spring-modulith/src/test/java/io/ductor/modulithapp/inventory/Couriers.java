package io.ductor.modulithapp.inventory;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** Two couriers: a van and a bike, beans of one listener class. */
@Configuration(proxyBeanMethods = false)
class Couriers {

	@Bean
	Courier van() {
		return new Courier("van");
	}

	@Bean
	Courier bike() {
		return new Courier("bike");
	}

}
