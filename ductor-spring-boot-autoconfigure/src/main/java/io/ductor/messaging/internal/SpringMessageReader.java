package io.ductor.messaging.internal;

import java.lang.annotation.Annotation;
import java.lang.reflect.Method;
import java.util.Map;

import org.jspecify.annotations.Nullable;

import org.springframework.core.annotation.AnnotationUtils;
import org.springframework.messaging.Message;
import org.springframework.messaging.handler.annotation.Header;
import org.springframework.messaging.handler.annotation.Headers;
import org.springframework.messaging.handler.annotation.Payload;

import io.ductor.messaging.ListenerMessageReader;

/**
 * Reads Spring Messaging arguments: a {@link Message}, a {@link Header @Header} or
 * {@link Headers @Headers} parameter, and the payload ({@link Payload @Payload}, or the
 * one parameter without a messaging annotation that is not a {@link Message}).
 */
public class SpringMessageReader implements ListenerMessageReader {

	@Override
	public @Nullable String header(Method method, @Nullable Object[] arguments, String name) {
		Annotation[][] annotations = method.getParameterAnnotations();
		for (int i = 0; i < arguments.length; i++) {
			Object argument = arguments[i];
			if (argument instanceof Message<?> message && message.getHeaders().containsKey(name)) {
				return ListenerMessageReader.text(message.getHeaders().get(name));
			}
			for (Annotation annotation : annotations[i]) {
				if (annotation instanceof Header header && name.equals(headerName(header))) {
					return ListenerMessageReader.text(argument);
				}
				if (annotation instanceof Headers && argument instanceof Map<?, ?> headers
						&& headers.containsKey(name)) {
					return ListenerMessageReader.text(headers.get(name));
				}
			}
		}
		return null;
	}

	private static String headerName(Header header) {
		return header.name().isEmpty() ? header.value() : header.name();
	}

	@Override
	public @Nullable Object payload(Method method, @Nullable Object[] arguments) {
		Annotation[][] annotations = method.getParameterAnnotations();
		Integer candidate = null;
		int candidates = 0;
		for (int i = 0; i < arguments.length; i++) {
			if (arguments[i] instanceof Message<?> message) {
				return message.getPayload();
			}
			if (has(annotations[i], Payload.class)) {
				return arguments[i];
			}
			if (!has(annotations[i], Header.class) && !has(annotations[i], Headers.class)) {
				candidate = i;
				candidates++;
			}
		}
		return (candidates == 1) ? arguments[candidate] : null;
	}

	private static boolean has(Annotation[] annotations, Class<? extends Annotation> type) {
		for (Annotation annotation : annotations) {
			if (annotation.annotationType() == type
					|| AnnotationUtils.findAnnotation(annotation.annotationType(), type) != null) {
				return true;
			}
		}
		return false;
	}

}
