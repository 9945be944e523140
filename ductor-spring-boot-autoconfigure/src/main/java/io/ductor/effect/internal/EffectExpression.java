package io.ductor.effect.internal;

import java.util.ArrayList;
import java.util.Arrays;
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
import org.springframework.expression.spel.SpelNode;
import org.springframework.expression.spel.ast.Assign;
import org.springframework.expression.spel.ast.FunctionReference;
import org.springframework.expression.spel.ast.OpPlus;
import org.springframework.expression.spel.ast.StringLiteral;
import org.springframework.expression.spel.ast.VariableReference;
import org.springframework.expression.spel.standard.SpelExpression;
import org.springframework.expression.spel.support.StandardEvaluationContext;

import io.ductor.effect.DurableEffectException;

/**
 * A key or ordering key expression of one effect, parsed once at start-up, with the
 * method's parameter names resolved once. Each evaluation gets a small context of its own
 * over the call's arguments; everything else (property accessors, method resolvers, the
 * type converter) comes from one shared {@link StandardEvaluationContext}. The variables
 * are those of Spring's {@code MethodBasedEvaluationContext}: each parameter by name,
 * {@code #p0}, {@code #a0}; the root object is {@code null}.
 * <p>
 * The commonest keys ({@code #orderId}, {@code 'ship:' + #orderId},
 * {@code #a + ':' + #b}) are variables and string literals joined by {@code +}. For
 * those, a call whose variables are strings, integers, booleans, characters or
 * {@code null} is evaluated without SpEL's interpreter, giving what SpEL gives (each
 * value as {@code String.valueOf} writes it); any other value, two numbers added, or any
 * other expression goes through SpEL.
 */
public final class EffectExpression {

	/**
	 * Configured once and only read afterwards: every getter is called here so no field
	 * is initialized lazily later.
	 */
	private static final StandardEvaluationContext shared = shared();

	private final Expression expression;

	private final String attribute;

	private final String effectName;

	private final String[] parameterNames;

	/**
	 * The expression as a concatenation of literals and variables, or {@code null} when
	 * it is another kind.
	 */
	private final Part concatenation;

	/**
	 * @param expression the parsed expression
	 * @param attribute the annotation attribute it comes from ({@code key},
	 * {@code orderingKey})
	 * @param effectName the effect's name
	 * @param parameterNames the method's parameter names; an element is {@code null} when
	 * unknown
	 */
	EffectExpression(Expression expression, String attribute, String effectName, String[] parameterNames) {
		this.expression = expression;
		this.attribute = attribute;
		this.effectName = effectName;
		this.parameterNames = parameterNames;
		this.concatenation = (expression instanceof SpelExpression spel) ? part(spel.getAST()) : null;
	}

	/**
	 * The variables the expression names that are none of the method's parameters: not a
	 * parameter name, not {@code #p0} / {@code #a0} of an existing parameter, nor
	 * {@code #this} / {@code #root}, nor set by the expression itself (evaluated, each
	 * would be {@code null}); and the functions it calls (none is registered).
	 * @return the unknown variables, in the order the expression names them
	 */
	List<String> unknownVariables() {
		List<String> unknown = new ArrayList<>();
		if (this.expression instanceof SpelExpression spel) {
			List<String> assigned = new ArrayList<>();
			collectAssigned(spel.getAST(), assigned);
			collectUnknown(spel.getAST(), assigned, unknown);
		}
		return unknown;
	}

	/** Variables the expression sets itself ({@code #x = ...}). */
	private static void collectAssigned(SpelNode node, List<String> assigned) {
		if (node instanceof Assign && node.getChildCount() > 0
				&& node.getChild(0) instanceof VariableReference variable) {
			assigned.add(variable.toStringAST().substring(1));
		}
		for (int i = 0; i < node.getChildCount(); i++) {
			collectAssigned(node.getChild(i), assigned);
		}
	}

	private void collectUnknown(SpelNode node, List<String> assigned, List<String> unknown) {
		if (node instanceof FunctionReference function) {
			// no function is registered: every call of one fails
			String text = function.toStringAST();
			String name = text.substring(1, Math.max(1, text.indexOf('(')));
			if (!unknown.contains(name)) {
				unknown.add(name);
			}
		}
		if (node instanceof VariableReference variable) {
			String name = variable.toStringAST().substring(1);
			int position = Arguments.positional(name);
			boolean known = name.equals("this") || name.equals("root") || assigned.contains(name)
					|| Arrays.asList(this.parameterNames).contains(name)
					|| (position >= 0 && position < this.parameterNames.length);
			if (!known && !unknown.contains(name)) {
				unknown.add(name);
			}
		}
		for (int i = 0; i < node.getChildCount(); i++) {
			collectUnknown(node.getChild(i), assigned, unknown);
		}
	}

	/**
	 * @return the expression's text
	 */
	String text() {
		return this.expression.getExpressionString();
	}

	/**
	 * @param args the call's arguments
	 * @return the value as a string
	 * @throws DurableEffectException when the expression fails or gives {@code null}
	 */
	String evaluate(Object[] args) {
		if (this.concatenation != null) {
			Object value = this.concatenation.value(this.parameterNames, args);
			if (value != INTERPRET) {
				if (value == null) {
					throw evaluatedToNull();
				}
				return value.toString();
			}
		}
		Object value;
		try {
			value = this.expression.getValue(new Arguments(this.parameterNames, args));
		}
		catch (EvaluationException ex) {
			throw new DurableEffectException("The " + this.attribute + " expression '" + text() + "' of effect '"
					+ this.effectName + "' failed: " + ex.getMessage(), ex);
		}
		if (value == null) {
			throw evaluatedToNull();
		}
		return value.toString();
	}

	private DurableEffectException evaluatedToNull() {
		return new DurableEffectException("The " + this.attribute + " expression '" + text() + "' of effect '"
				+ this.effectName + "' evaluated to null");
	}

	/**
	 * What a part gives when it cannot tell what SpEL would: the whole expression goes to
	 * SpEL.
	 */
	private static final Object INTERPRET = new Object();

	/** A literal, a variable, or two parts joined by {@code +}. */
	private interface Part {

		/**
		 * @return the value, or {@link #INTERPRET}
		 */
		Object value(String[] names, Object[] args);

	}

	/**
	 * @return the node as a concatenation part, or {@code null} when it is something else
	 */
	private static Part part(SpelNode node) {
		if (node instanceof StringLiteral literal) {
			Object text = literal.getLiteralValue().getValue();
			return (names, args) -> text;
		}
		if (node instanceof VariableReference variable) {
			String name = variable.toStringAST().substring(1);
			if (name.equals("this") || name.equals("root")) {
				return null;
			}
			return (names, args) -> Arguments.lookup(names, args, name);
		}
		if (node instanceof OpPlus plus && plus.getChildCount() == 2) {
			Part left = part(plus.getLeftOperand());
			Part right = part(plus.getRightOperand());
			if (left == null || right == null) {
				return null;
			}
			return (names, args) -> {
				Object one = left.value(names, args);
				if (one == INTERPRET || !isPlain(one)) {
					return INTERPRET;
				}
				Object two = right.value(names, args);
				if (two == INTERPRET || !isPlain(two)) {
					return INTERPRET;
				}
				if (!(one instanceof String) && !(two instanceof String)) {
					return INTERPRET; // numbers add, anything else is SpEL's to decide
				}
				String joined = String.valueOf(one) + two;
				// SpEL refuses strings past its limit; let it say so
				return (joined.length() <= MAX_JOINED_LENGTH) ? joined : INTERPRET;
			};
		}
		return null;
	}

	/** Well under SpEL's own limit on a concatenated string. */
	private static final int MAX_JOINED_LENGTH = 10_000;

	/** Values SpEL's {@code +} turns into text as {@code String.valueOf} does. */
	private static boolean isPlain(Object value) {
		return value == null || value instanceof String || value instanceof Long || value instanceof Integer
				|| value instanceof Short || value instanceof Byte || value instanceof Boolean
				|| value instanceof Character;
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

	/**
	 * The variables of one evaluation: the call's arguments, and whatever the expression
	 * assigns.
	 */
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
			return lookup(this.names, this.args, name);
		}

		/**
		 * The argument a variable name refers to, as MethodBasedEvaluationContext
		 * resolves it.
		 */
		static Object lookup(String[] names, Object[] args, String name) {
			// a parameter name wins over #p0 and #a0
			for (int i = names.length - 1; i >= 0; i--) {
				if (name.equals(names[i])) {
					return argument(args, i);
				}
			}
			int index = positional(name);
			return (index >= 0 && index < names.length) ? argument(args, index) : null;
		}

		private static Object argument(Object[] args, int index) {
			return (index < args.length) ? args[index] : null;
		}

		/**
		 * @return {@code n} for {@code pn} or {@code an}, else -1
		 */
		static int positional(String name) {
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
