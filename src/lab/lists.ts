import { ErrorCode, UbiError } from "../errors.js";

/** Comma-separated integers of flag `--name`, each in [min, max], in the order given, without repeats. */
export function integerList(name: string, text: string, min: number, max: number): number[] {
  const values = text.split(",").map((part) => part.trim());
  const numbers: number[] = [];
  for (const value of values) {
    const number = /^\d+$/.test(value) ? Number(value) : Number.NaN;
    if (!Number.isSafeInteger(number) || number < min || number > max) {
      throw new UbiError(
        ErrorCode.InvalidArgument,
        `--${name}: "${value}" is not an integer in ${min}..${max} (give a comma-separated list, e.g. --${name} ${min},${Math.min(max, min * 2)})`,
      );
    }
    if (!numbers.includes(number)) numbers.push(number);
  }
  return numbers;
}

/** Comma-separated words of flag `--name`, each one of `choices`, without repeats. */
export function choiceList<C extends string>(name: string, text: string, choices: readonly C[]): C[] {
  const picked: C[] = [];
  for (const part of text.split(",").map((word) => word.trim())) {
    const choice = choices.find((c) => c === part);
    if (choice === undefined) {
      throw new UbiError(
        ErrorCode.InvalidArgument,
        `--${name}: "${part}" is not one of ${choices.join(", ")}`,
      );
    }
    if (!picked.includes(choice)) picked.push(choice);
  }
  return picked;
}
