import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import { Field, type FieldProps } from '../kit/components.tsx';

/**
 * Whether the signed-in account has a password. One made through an identity provider may
 * not: its forms then leave the current password out, and a recent sign-in through the
 * provider stands in for it (docs/API.md, Identity providers).
 */
export const HasPassword = createContext(true);

/** The current password's field, shown only to an account that has one. */
export function CurrentPasswordField(props: FieldProps) {
  return useContext(HasPassword) ? <Field {...props} /> : null;
}
