package io.ductor.effect;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.springframework.expression.BeanResolver;
import org.springframework.expression.ConstructorResolver;
import org.springframework.expression.EvaluationContext;
import org.springframework.expression.EvaluationException;
import org.springframework.expression.Expression;
import org.springframework.expression.MethodResolver;
import org.springframework.expression.OperatorOverloader;
import org.springframework.expression.PropertyAccessor;
import org.springframework.expression.TypeComparator;
import org.springframework.expression.TypeConverter;
import org.springframework.expression.TypeLocator;
import org.springframework.expression.TypedValue;
import org.springframework.expression.spel.support.StandardEvaluationContext;

/**
 * A key or ordering key expression of one effect, parsed once at start-up, with the method's
 * parameter names resolved once. Each evaluation gets a small context of its own over the call's
 * arguments; everything else (property accessors, method resolvers, the type converter) comes from
 * one shared {@link StandardEvaluationContext}. The variables are those of Spring's
 * {@code MethodBasedEvaluationContext}: each parameter by name, {@code #p0}, {@code #a0}; the root
 * object is {@code null}.
 */
final class EffectExpression {

	/** Configured once and only read afterwards: every getter is called here so no field is initialized lazily later. */
	private static final StandardEvaluationContext shared = shared();

	private final Expression expression;

	private final String attribute;

	private final String effectName;

	private final String[] parameterNames;

	/**
	 * @param expression the parsed expression
	 * @param attribute the annotation attribute it comes from ({@code key}, {@code orderingKey})
	 * @param effectName the effect's name
	 * @param parameterNames the method's parameter names; an element is {@code null} when unknown
	 */
	EffectExpression(Expression expression, String attribute, String effectName, String[] parameterNames) {
		this.expression = expression;
		this.attribute = attribute;
		this.effectName = effectName;
		this.parameterNames = parameterNames;
	}

	/** @return the expression's text */
	String text() {
		return this.expression.getExpressionString();
	}

	/**
	 * @param args the call's arguments
	 * @return the value as a string
	 * @throws DurableEffectException when the expression fails or gives {@code null}
	 */
	String evaluate(Object[] args) {
		Object value;
		try {
			value = this.expression.getValue(new Arguments(this.parameterNames, args));
		}
		catch (EvaluationException ex) {
			throw new DurableEffectException("The " + this.attribute + " expression '" + text() + "' of effect '"
					+ this.effectName + "' failed: " + ex.getMessage(), ex);
		}
		if (value == null) {
			throw new DurableEffectException("The " + this.attribute + " expression '" + text() + "' of effect '"
					+ this.effectName + "' evaluated to null");
		}
		return value.toString();
	}

	private static StandardEvaluationContext shared() {
		StandardEvaluationContext context = new StandardEvaluationContext();
		context.getPropertyAccessors();
		context.getIndexAccessors();
		context.getConstructorResolvers();
		context.getMethodResolvers();
		context.getTypeLocator();
		context.getTypeConverter();
		context.getTypeComparator();
		context.getOperatorOverloader();
		return context;
	}

	/** The variables of one evaluation: the call's arguments, and whatever the expression assigns. */
	private static final class Arguments implements EvaluationContext {

		private final String[] names;

		private final Object[] args;

		private Map<String, Object> assigned;

		Arguments(String[] names, Object[] args) {
			this.names = names;
			this.args = args;
		}

		@Override
		public Object lookupVariable(String name) {
			if (this.assigned != null && this.assigned.containsKey(name)) {
				return this.assigned.get(name);
			}
			// as MethodBasedEvaluationContext: a parameter name wins over #p0 and #a0
			for (int i = this.names.length - 1; i >= 0; i--) {
				if (name.equals(this.names[i])) {
					return argument(i);
				}
			}
			int index = positional(name);
			return (index >= 0 && index < this.names.length) ? argument(index) : null;
		}

		private Object argument(int index) {
			return (index < this.args.length) ? this.args[index] : null;
		}

		/** @return {@code n} for {@code pn} or {@code an}, else -1 */
		private static int positional(String name) {
			if (name.length() < 2 || (name.charAt(0) != 'p' && name.charAt(0) != 'a')) {
				return -1;
			}
			int index = 0;
			for (int i = 1; i < name.length(); i++) {
				char c = name.charAt(i);
				if (c < '0' || c > '9' || index > 100_000) {
					return -1;
				}
				index = index * 10 + (c - '0');
			}
			if (name.length() > 2 && name.charAt(1) == '0') {
				return -1; // "p01" is no variable MethodBasedEvaluationContext defines
			}
			return index;
		}

		@Override
		public void setVariable(String name, Object value) {
			if (this.assigned == null) {
				this.assigned = new HashMap<>();
			}
			this.assigned.put(name, value);
		}

		@Override
		public TypedValue getRootObject() {
			return TypedValue.NULL;
		}

		@Override
		public List<PropertyAccessor> getPropertyAccessors() {
			return shared.getPropertyAccessors();
		}

		@Override
		public List<org.springframework.expression.IndexAccessor> getIndexAccessors() {
			return shared.getIndexAccessors();
		}

		@Override
		public List<ConstructorResolver> getConstructorResolvers() {
			return shared.getConstructorResolvers();
		}

		@Override
		public List<MethodResolver> getMethodResolvers() {
			return shared.getMethodResolvers();
		}

		@Override
		public BeanResolver getBeanResolver() {
			return null;
		}

		@Override
		public TypeLocator getTypeLocator() {
			return shared.getTypeLocator();
		}

		@Override
		public TypeConverter getTypeConverter() {
			return shared.getTypeConverter();
		}

		@Override
		public TypeComparator getTypeComparator() {
			return shared.getTypeComparator();
		}

		@Override
		public OperatorOverloader getOperatorOverloader() {
			return shared.getOperatorOverloader();
		}

	}

}
