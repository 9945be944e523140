package io.ductor.modulith.autoconfigure;

import java.time.Clock;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Role;
import org.springframework.core.env.Environment;
import org.springframework.modulith.events.config.EventPublicationAutoConfiguration;
import org.springframework.modulith.events.core.EventPublicationRegistry;
import org.springframework.modulith.events.core.EventPublicationRepository;
import org.springframework.modulith.events.support.CompletionMode;

import io.ductor.autoconfigure.internal.DuctorConfigurationException;
import io.ductor.effect.EffectOperations;
import io.ductor.effect.autoconfigure.DuctorEffectsAutoConfiguration;
import io.ductor.jdbc.internal.DuctorDatabase;
import io.ductor.json.internal.JsonCodec;
import io.ductor.modulith.internal.DuctorEventPublicationRegistry;
import io.ductor.modulith.internal.DuctorListenerFactory;
import io.ductor.modulith.internal.EventCodec;
import io.ductor.modulith.internal.PublicationDelivery;
import io.ductor.modulith.internal.PublicationStore;
import io.ductor.modulith.internal.PublishedEvents;

/**
 * Spring Modulith's event publication registry on Ductor, when Modulith's event support
 * is on the class path and no other publication store (Modulith's JDBC, JPA, MongoDB
 * registry, or one of the application's) is configured. Off with
 * {@code ductor.modulith.enabled=false}.
 */
@AutoConfiguration(after = DuctorEffectsAutoConfiguration.class, before = EventPublicationAutoConfiguration.class,
		afterName = { "org.springframework.modulith.events.jdbc.JdbcEventPublicationAutoConfiguration",
				"org.springframework.modulith.events.jpa.JpaEventPublicationAutoConfiguration",
				"org.springframework.modulith.events.mongodb.MongoDbEventPublicationAutoConfiguration" })
@ConditionalOnClass(EventPublicationRegistry.class)
@ConditionalOnBooleanProperty(name = "ductor.modulith.enabled", matchIfMissing = true)
@ConditionalOnBean(EffectOperations.class)
@ConditionalOnMissingBean({ EventPublicationRegistry.class, EventPublicationRepository.class })
public final class DuctorModulithAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	EventCodec ductorModulithEventCodec(JsonCodec json, ApplicationContext context) {
		return new EventCodec(json.mapper(), context.getClassLoader());
	}

	// the next three are not @ConditionalOnMissingBean: they are how Modulith's listeners
	// become Ductor's effects (the factory, the @DurableEffect every publication is an
	// intent of, and this JVM's just-published events), plumbing rather than extension
	// points; the registry steps aside as a whole for one of the application's
	@Bean
	@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
	static DuctorListenerFactory ductorModulithListenerFactory() {
		return new DuctorListenerFactory();
	}

	@Bean
	PublishedEvents ductorModulithPublishedEvents() {
		return new PublishedEvents();
	}

	@Bean
	PublicationDelivery ductorModulithDelivery(DuctorListenerFactory listeners, EventCodec events,
			PublishedEvents published) {
		return new PublicationDelivery(listeners, events, published);
	}

	@Bean
	@ConditionalOnMissingBean
	PublicationStore ductorModulithPublicationStore(DuctorDatabase database, EventCodec events) {
		return new PublicationStore(database.dataSource(), events);
	}

	// not @ConditionalOnMissingBean here: the class's condition already steps aside for
	// any EventPublicationRegistry or EventPublicationRepository of the application's
	@Bean
	DuctorEventPublicationRegistry eventPublicationRegistry(DuctorListenerFactory listeners,
			PublicationDelivery delivery, EventCodec events, PublicationStore store, EffectOperations operations,
			ObjectProvider<Clock> clock, Environment environment, PublishedEvents published) {
		String mode = environment.getProperty(CompletionMode.PROPERTY);
		if (mode != null && !mode.isBlank() && !mode.trim().equalsIgnoreCase(CompletionMode.UPDATE.name())) {
			throw new DuctorConfigurationException(
					CompletionMode.PROPERTY + " is " + mode.trim()
							+ ", but Ductor keeps completed publications and purges "
							+ "them after ductor.effects.retention, as the UPDATE mode does",
					"Remove " + CompletionMode.PROPERTY + " (or set it to update), or set "
							+ "ductor.modulith.enabled=false to keep a Modulith registry of your own");
		}
		return new DuctorEventPublicationRegistry(listeners, delivery, events, store, operations,
				clock.getIfAvailable(Clock::systemUTC), published);
	}

}
