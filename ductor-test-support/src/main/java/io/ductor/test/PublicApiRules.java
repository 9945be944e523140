package io.ductor.test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaCodeUnit;
import com.tngtech.archunit.core.domain.JavaField;
import com.tngtech.archunit.core.domain.JavaMember;
import com.tngtech.archunit.core.domain.JavaModifier;
import com.tngtech.archunit.core.domain.JavaType;
import com.tngtech.archunit.core.domain.JavaTypeVariable;
import com.tngtech.archunit.core.domain.ThrowsDeclaration;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.jspecify.annotations.NullMarked;

/**
 * The rules of Ductor's public API (CONTRIBUTING.md), for the module that holds the
 * classes: every public top-level type outside an {@code internal} package is named in
 * the README's "Public API" section and every type named there exists; no public or
 * protected signature outside {@code internal} names an {@code internal} type; no package
 * depends on a package that depends back on it; every package is {@code @NullMarked}.
 * Each method returns what breaks a rule, empty when nothing does.
 */
public final class PublicApiRules {

	private static final Pattern API_LINE = Pattern.compile("^- `(io\\.ductor[a-z.]*)`: (.+)$");

	private static final Pattern NAME = Pattern.compile("`([A-Za-z0-9]+)`");

	private PublicApiRules() {
	}

	/**
	 * Everything in the main classes of package {@code module} and its sub-packages that
	 * breaks a rule: for a module that is not on the sample shop's class path (whose
	 * {@code PublicApiTest} checks the others), from its own tests.
	 * @param module the module's root package, {@code io.ductor.amqp}
	 * @return what breaks a rule, one line each; empty when nothing does
	 */
	public static List<String> violationsOf(String module) {
		JavaClasses classes = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
			.importPackages(module);
		List<String> violations = new ArrayList<>();
		if (classes.isEmpty()) {
			violations.add("no main classes in " + module);
		}
		Set<String> published = publishedTypes(classes);
		Set<String> documented = new TreeSet<>(documentedTypes());
		documented.removeIf((name) -> !name.startsWith(module + "."));
		published.stream()
			.filter((name) -> !documented.contains(name))
			.forEach((name) -> violations.add("public, but not named in README's Public API: " + name));
		documented.stream()
			.filter((name) -> !published.contains(name))
			.forEach((name) -> violations.add("named in README's Public API, but not a public type: " + name));
		internalTypesInSignatures(classes)
			.forEach((leak) -> violations.add("a public signature names an internal type: " + leak));
		packageCycles(classes).forEach((cycle) -> violations.add("packages that depend on each other: " + cycle));
		packagesNotNullMarked(classes).forEach((name) -> violations.add("no @NullMarked package-info.java: " + name));
		return violations;
	}

	/**
	 * Whether {@code type} is in package {@code name} or one of its sub-packages:
	 * {@code io.ductor.testing} (the library) is not in {@code io.ductor.test} (the
	 * build's test support).
	 * @param type a class
	 * @param name a package name
	 * @return whether the class is in it or below it
	 */
	public static boolean inPackage(JavaClass type, String name) {
		return type.getPackageName().equals(name) || type.getPackageName().startsWith(name + ".");
	}

	/**
	 * @param classes the library's classes
	 * @return the names of the public top-level types of {@code classes} outside
	 * {@code internal} packages
	 */
	public static Set<String> publishedTypes(JavaClasses classes) {
		Set<String> published = new TreeSet<>();
		for (JavaClass type : classes) {
			if (type.isTopLevelClass() && type.getModifiers().contains(JavaModifier.PUBLIC) && !isInternal(type)) {
				published.add(type.getName());
			}
		}
		return published;
	}

	/**
	 * @return the fully qualified names of the types README.md's "Public API" section
	 * names
	 */
	public static Set<String> documentedTypes() {
		Set<String> names = new TreeSet<>();
		boolean inSection = false;
		try {
			for (String line : Files.readAllLines(readme())) {
				if (line.startsWith("## ")) {
					inSection = line.equals("## Public API");
					continue;
				}
				Matcher api = API_LINE.matcher(line);
				if (inSection && api.matches()) {
					Matcher name = NAME.matcher(api.group(2));
					while (name.find()) {
						names.add(api.group(1) + "." + name.group(1));
					}
				}
			}
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		if (names.isEmpty()) {
			throw new IllegalStateException("README.md has no types listed under '## Public API'");
		}
		return names;
	}

	/**
	 * @param classes the library's classes
	 * @return the public signatures outside internal packages that name an internal type,
	 * one line each
	 */
	public static List<String> internalTypesInSignatures(JavaClasses classes) {
		List<String> leaks = new ArrayList<>();
		for (JavaClass type : classes) {
			if (isApi(type)) {
				leaks.addAll(internalTypesIn(type));
			}
		}
		return leaks;
	}

	/**
	 * @param classes the classes to check
	 * @return the packages of {@code classes} without {@code @NullMarked} in their
	 * {@code package-info.java}
	 */
	public static Set<String> packagesNotNullMarked(JavaClasses classes) {
		Set<String> unmarked = new TreeSet<>();
		for (JavaClass type : classes) {
			boolean marked = type.getPackage()
				.tryGetPackageInfo()
				.map((info) -> info.isAnnotatedWith(NullMarked.class))
				.orElse(false);
			if (!marked) {
				unmarked.add(type.getPackageName());
			}
		}
		return unmarked;
	}

	/**
	 * Whether {@code type} is part of the API: public (or a public or protected member
	 * type of such a type) and outside {@code internal} packages.
	 */
	private static boolean isApi(JavaClass type) {
		if (isInternal(type) || !type.getModifiers().contains(JavaModifier.PUBLIC)
				&& !type.getModifiers().contains(JavaModifier.PROTECTED)) {
			return false;
		}
		return type.getEnclosingClass().map(PublicApiRules::isApi).orElse(type.isTopLevelClass());
	}

	private static boolean isInternal(JavaClass type) {
		return type.getPackageName().endsWith(".internal") || type.getPackageName().contains(".internal.");
	}

	private static boolean isVisible(JavaMember member) {
		return member.getModifiers().contains(JavaModifier.PUBLIC)
				|| member.getModifiers().contains(JavaModifier.PROTECTED)
						&& !member.getOwner().getModifiers().contains(JavaModifier.FINAL);
	}

	/**
	 * The internal types named by {@code type}'s supertypes and type parameters and by
	 * the signatures of its visible fields, constructors and methods (parameters,
	 * results, type arguments, bounds and thrown exceptions), one line each.
	 * @param type a type of the API
	 * @return what it names that is internal
	 */
	public static List<String> internalTypesIn(JavaClass type) {
		List<String> leaks = new ArrayList<>();
		type.getSuperclass().ifPresent((superclass) -> check(leaks, type.getName() + " extends", superclass));
		type.getInterfaces().forEach((supertype) -> check(leaks, type.getName() + " implements", supertype));
		for (JavaTypeVariable<?> variable : type.getTypeParameters()) {
			check(leaks, type.getName() + " type parameter " + variable.getName(), variable);
		}
		for (JavaField field : type.getFields()) {
			if (isVisible(field)) {
				check(leaks, field.getFullName(), field.getType());
			}
		}
		for (JavaCodeUnit unit : type.getCodeUnits()) {
			if (!isVisible(unit) || unit.getModifiers().contains(JavaModifier.SYNTHETIC)
					|| unit.getModifiers().contains(JavaModifier.BRIDGE)) {
				continue;
			}
			check(leaks, unit.getFullName() + " returns", unit.getReturnType());
			unit.getParameterTypes().forEach((parameter) -> check(leaks, unit.getFullName() + " takes", parameter));
			for (JavaTypeVariable<?> variable : unit.getTypeParameters()) {
				check(leaks, unit.getFullName() + " type parameter " + variable.getName(), variable);
			}
			for (ThrowsDeclaration<?> thrown : unit.getThrowsClause()) {
				check(leaks, unit.getFullName() + " throws", thrown.getRawType());
			}
		}
		return leaks;
	}

	private static void check(List<String> leaks, String where, JavaType type) {
		Set<JavaClass> involved = (type instanceof JavaTypeVariable<?> variable) ? variable.getUpperBounds()
			.stream()
			.flatMap((bound) -> bound.getAllInvolvedRawTypes().stream())
			.collect(Collectors.toSet()) : type.getAllInvolvedRawTypes();
		for (JavaClass named : involved) {
			if (named.getPackageName().startsWith("io.ductor") && isInternal(named)) {
				leaks.add(where + " " + named.getName());
			}
		}
	}

	/**
	 * The cycles of the package graph of {@code classes} (package A depends on package B
	 * when a class of A names a class of B anywhere, its code included), each as its
	 * packages with the dependencies that join them.
	 * @param classes the classes
	 * @return the cycles, empty when there are none
	 */
	public static List<String> packageCycles(JavaClasses classes) {
		Map<String, Map<String, String>> edges = new TreeMap<>();
		for (JavaClass type : classes) {
			type.getDirectDependenciesFromSelf().forEach((dependency) -> {
				String from = type.getPackageName();
				String to = dependency.getTargetClass().getPackageName();
				if (!from.equals(to) && classes.contain(dependency.getTargetClass().getName())) {
					edges.computeIfAbsent(from, (key) -> new TreeMap<>())
						.putIfAbsent(to, type.getName() + " -> " + dependency.getTargetClass().getName());
				}
			});
		}
		List<String> cycles = new ArrayList<>();
		for (Set<String> component : stronglyConnected(edges)) {
			StringBuilder cycle = new StringBuilder(component.toString());
			for (String from : component) {
				edges.getOrDefault(from, Map.of()).forEach((to, example) -> {
					if (component.contains(to)) {
						cycle.append("\n    ").append(example);
					}
				});
			}
			cycles.add(cycle.toString());
		}
		return cycles;
	}

	/** Tarjan's strongly connected components of more than one package. */
	private static List<Set<String>> stronglyConnected(Map<String, Map<String, String>> edges) {
		Map<String, Integer> index = new HashMap<>();
		Map<String, Integer> low = new HashMap<>();
		Deque<String> stack = new ArrayDeque<>();
		List<Set<String>> components = new ArrayList<>();
		for (String start : edges.keySet()) {
			if (!index.containsKey(start)) {
				connect(start, edges, index, low, stack, components);
			}
		}
		return components;
	}

	private static void connect(String node, Map<String, Map<String, String>> edges, Map<String, Integer> index,
			Map<String, Integer> low, Deque<String> stack, List<Set<String>> components) {
		index.put(node, index.size());
		low.put(node, index.get(node));
		stack.push(node);
		for (String next : edges.getOrDefault(node, Map.of()).keySet()) {
			if (!index.containsKey(next)) {
				connect(next, edges, index, low, stack, components);
				low.put(node, Math.min(low.get(node), low.get(next)));
			}
			else if (stack.contains(next)) {
				low.put(node, Math.min(low.get(node), index.get(next)));
			}
		}
		if (low.get(node).equals(index.get(node))) {
			Set<String> component = new TreeSet<>();
			String member;
			do {
				member = stack.pop();
				component.add(member);
			}
			while (!member.equals(node));
			if (component.size() > 1) {
				components.add(component);
			}
		}
	}

	private static Path readme() {
		for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
			if (Files.isRegularFile(dir.resolve("README.md")) && Files.isDirectory(dir.resolve("sample-app"))) {
				return dir.resolve("README.md");
			}
		}
		throw new IllegalStateException("README.md not found above " + Path.of("").toAbsolutePath());
	}

}
